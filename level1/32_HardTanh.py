import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Applies HardTanh clamping to [-1, 1] elementwise."""

    def __init__(self):
        super().__init__()
        self.min_val = -1.0
        self.max_val = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


batch_size = 4096
dim = 393216


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
