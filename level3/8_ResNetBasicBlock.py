import torch
import torch.nn as nn


class Model(nn.Module):
    """ResNet basic block: two 3x3 conv + BatchNorm, a 1x1 conv + BatchNorm shortcut, add, ReLU."""

    expansion = 1

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = nn.Sequential(
            nn.Conv2d(in_channels, out_channels * self.expansion, kernel_size=1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels * self.expansion),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = self.downsample(x)
        out = out + identity
        out = self.relu(out)
        return out


batch_size = 10
in_channels = 3
out_channels = 64
stride = 1


def get_inputs():
    x = torch.rand(batch_size, in_channels, 224, 224)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, stride]
