import torch
import torch.nn as nn


class Model(nn.Module):
    """Product of two lower triangular matrices, kept lower triangular."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(a, b))


M = 4096


def get_inputs():
    a = torch.tril(torch.rand(M, M))
    b = torch.tril(torch.rand(M, M))
    return [a, b]


def get_init_inputs():
    return []
