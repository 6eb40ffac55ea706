import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d, divide by a constant, LeakyReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x / self.divisor
        x = F.leaky_relu(x, negative_slope=0.01)
        return x


batch_size = 128
in_channels = 8
out_channels = 64
height = 128
width = 128
kernel_size = 3
divisor = 2


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor]
