import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv3d, Mish, tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.mish(x)
        x = torch.tanh(x)
        return x


batch_size = 16
in_channels = 32
out_channels = 64
D = 32
H = 64
W = 64
kernel_size = 3


def get_inputs():
    x = torch.rand(batch_size, in_channels, D, H, W)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
