import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose2d, subtracts a learnable bias, then tanh."""

    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=2, padding=1, output_padding=1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x - self.bias
        x = torch.tanh(x)
        return x


batch_size = 32
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 4
bias_shape = (out_channels, 1, 1)


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
