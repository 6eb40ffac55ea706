import torch
import torch.nn as nn
from typing import List


class Model(nn.Module):
    """RegNet-style classifier: stages of (conv3x3-BN-ReLU) x2 + maxpool, global mean, linear head."""

    def __init__(self, input_channels: int, stages: int, block_widths: List[int], output_classes: int):
        super().__init__()
        self.stages = stages
        self.block_widths = block_widths
        layers = []
        current_channels = input_channels
        for i in range(stages):
            layers.append(self._make_stage(current_channels, block_widths[i]))
            current_channels = block_widths[i]
        self.feature_extractor = nn.Sequential(*layers)
        self.fc = nn.Linear(block_widths[-1], output_classes)

    @staticmethod
    def _make_stage(in_channels: int, out_channels: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.feature_extractor(x)
        x = torch.mean(x, dim=[2, 3])
        x = self.fc(x)
        return x


batch_size = 8
input_channels = 3
image_height = 224
image_width = 224
stages = 3
block_widths = [64, 128, 256]
output_classes = 10


def get_inputs():
    x = torch.rand(batch_size, input_channels, image_height, image_width)
    return [x]


def get_init_inputs():
    return [input_channels, stages, block_widths, output_classes]
