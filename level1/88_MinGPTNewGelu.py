import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU, tanh approximation (minGPT / Google BERT 'new GELU')."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # 0.7978845608028654 == sqrt(2 / pi)
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))


batch_size = 8192
dim = 8192


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
