import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, InstanceNorm2d, divide by a constant."""

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = self.instance_norm(x)
        x = x / self.divide_by
        return x


batch_size = 128
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
divide_by = 2.0


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divide_by]
