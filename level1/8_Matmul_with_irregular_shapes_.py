import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication with irregular (non power of two) shapes."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 8205
K = 2949
N = 5921


def get_inputs():
    a = torch.rand(M, K)
    b = torch.rand(K, N)
    return [a, b]


def get_init_inputs():
    return []
