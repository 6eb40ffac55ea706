import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """ConvTranspose3d, add a second input, then x * hardswish(x).

    The `bias` parameter is created (and in the state dict) but not used in forward.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor, add_input: torch.Tensor) -> torch.Tensor:
        x = self.conv_transpose(x)
        x = x + add_input
        x = x * F.hardswish(x)
        return x


batch_size = 128
in_channels = 32
out_channels = 64
D = 16
H = 16
W = 16
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1, 1)


def get_inputs():
    x = torch.rand(batch_size, in_channels, D, H, W)
    add_input = torch.rand(batch_size, out_channels, D * stride, H * stride, W * stride)
    return [x, add_input]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]
