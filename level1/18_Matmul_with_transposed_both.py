import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A.T @ B.T with A (K, M), B (N, K)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    a = torch.rand(K, M)
    b = torch.rand(N, K)
    return [a, b]


def get_init_inputs():
    return []
