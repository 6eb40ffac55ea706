import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d, multiply by a learned per-channel scalar, LeakyReLU, GELU."""

    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        x = F.gelu(x)
        return x


batch_size = 64
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 3
multiplier_shape = (out_channels, 1, 1)


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, multiplier_shape]
