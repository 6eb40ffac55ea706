import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, AvgPool1d over features, GELU, scale, max over features."""

    def __init__(self, in_features, out_features, pool_kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.avg_pool = nn.AvgPool1d(kernel_size=pool_kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = self.avg_pool(x.unsqueeze(1)).squeeze(1)
        x = F.gelu(x)
        x = x * self.scale_factor
        x = torch.max(x, dim=1).values
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
pool_kernel_size = 16
scale_factor = 2.0


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, pool_kernel_size, scale_factor]
