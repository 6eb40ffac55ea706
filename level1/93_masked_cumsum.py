import torch
import torch.nn as nn


class Model(nn.Module):
    """Prefix sum along a dimension of x with masked-out elements set to zero."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    x = torch.rand(batch_size, input_shape[0])
    mask = torch.randint(0, 2, (batch_size, input_shape[0])).to(torch.bool)
    return [x, mask]


def get_init_inputs():
    return [dim]
