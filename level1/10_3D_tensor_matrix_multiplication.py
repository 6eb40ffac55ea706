import torch
import torch.nn as nn


class Model(nn.Module):
    """3D tensor times matrix: (N, M, K) x (K, L) -> (N, M, L)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


N = 16
M = 1024
K = 2048
L = 768


def get_inputs():
    a = torch.rand(N, M, K)
    b = torch.rand(K, L)
    return [a, b]


def get_init_inputs():
    return []
