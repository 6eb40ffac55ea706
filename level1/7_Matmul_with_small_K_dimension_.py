import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix multiplication with a small reduction dimension K."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


M = 32768
N = 32768
K = 64


def get_inputs():
    a = torch.rand(M, K)
    b = torch.rand(K, N)
    return [a, b]


def get_init_inputs():
    return []
