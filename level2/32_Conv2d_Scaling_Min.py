import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d, scale, min over channels (keepdim)."""

    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = x * self.scale_factor
        x = torch.min(x, dim=1, keepdim=True)[0]
        return x


batch_size = 64
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
scale_factor = 2.0


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]
