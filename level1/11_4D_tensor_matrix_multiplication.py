import torch
import torch.nn as nn


class Model(nn.Module):
    """4D tensor times matrix via einsum: bijl,lk->bijk."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", a, b)


b_dim = 8
i_dim = 256
j_dim = 512
l_dim = 256
k_dim = 768


def get_inputs():
    a = torch.rand(b_dim, i_dim, j_dim, l_dim)
    b = torch.rand(l_dim, k_dim)
    return [a, b]


def get_init_inputs():
    return []
