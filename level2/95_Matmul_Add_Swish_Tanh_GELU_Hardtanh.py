import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, add a learned vector, Swish, tanh, GELU, Hardtanh to [-1, 1]."""

    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x + self.add_value
        x = torch.sigmoid(x) * x
        x = torch.tanh(x)
        x = F.gelu(x)
        x = F.hardtanh(x, min_val=-1.0, max_val=1.0)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
add_value_shape = (out_features,)


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]
