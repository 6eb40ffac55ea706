import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, then scaled output plus a detached copy of the unscaled output."""

    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        original_x = x.clone().detach()
        x = x * self.scaling_factor
        x = x + original_x
        return x


batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
