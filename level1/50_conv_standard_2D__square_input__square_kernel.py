import torch
import torch.nn as nn


class Model(nn.Module):
    """First convolution of AlexNet: Conv2d(3, 96, 11, stride 4, padding 2). num_classes is unused."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1(x)


batch_size = 256
num_classes = 1000


def get_inputs():
    x = torch.rand(batch_size, 3, 224, 224)
    return [x]


def get_init_inputs():
    return [num_classes]
