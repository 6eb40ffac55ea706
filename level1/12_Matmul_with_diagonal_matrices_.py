import torch
import torch.nn as nn


class Model(nn.Module):
    """diag(A) @ B, computed as A.unsqueeze(1) * B."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.unsqueeze(1) * b


M = 4096
N = 4096


def get_inputs():
    a = torch.rand(N)
    b = torch.rand(N, M)
    return [a, b]


def get_init_inputs():
    return []
