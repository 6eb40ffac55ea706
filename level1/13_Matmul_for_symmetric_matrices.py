import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication of two symmetric matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


N = 4096


def get_inputs():
    a = torch.rand(N, N)
    a = (a + a.T) / 2
    b = torch.rand(N, N)
    b = (b + b.T) / 2
    return [a, b]


def get_init_inputs():
    return []
