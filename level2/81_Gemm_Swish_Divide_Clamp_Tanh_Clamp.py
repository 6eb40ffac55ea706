import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, Swish, divide by 2, clamp to [-1, 1], tanh, clamp to [-1, 1]."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x * torch.sigmoid(x)
        x = x / 2.0
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = torch.tanh(x)
        x = torch.clamp(x, min=-1.0, max=1.0)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
