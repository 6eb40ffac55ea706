import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B.T with A (M, K), B (N, K)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


M = 2048
K = 8192
N = 4096


def get_inputs():
    a = torch.rand(M, K)
    b = torch.rand(N, K)
    return [a, b]


def get_init_inputs():
    return []
