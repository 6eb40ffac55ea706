import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies Softmax over dim 1."""

    def __init__(self):
        super().__init__()
        self.dim = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=self.dim)


batch_size = 4096
dim = 393216


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
