import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix multiplication: (B, M, K) x (B, K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


batch_size = 128
m = 512
k = 1024
n = 2048


def get_inputs():
    a = torch.rand(batch_size, m, k)
    b = torch.rand(batch_size, k, n)
    return [a, b]


def get_init_inputs():
    return []
