import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector multiplication: (M, K) x (K, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 2048
K = 1048576


def get_inputs():
    a = torch.rand(M, K)
    b = torch.rand(K, 1)
    return [a, b]


def get_init_inputs():
    return []
