import torch
import torch.nn as nn


class Model(nn.Module):
    """Tall-skinny matrix product: (M, N) x (N, M)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 32768
N = 32


def get_inputs():
    a = torch.rand(M, N)
    b = torch.rand(N, M)
    return [a, b]


def get_init_inputs():
    return []
