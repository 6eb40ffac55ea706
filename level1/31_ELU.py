import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Applies ELU with a configurable alpha elementwise."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


batch_size = 4096
dim = 393216
alpha = 1.0


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return [alpha]
