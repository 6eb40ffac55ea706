import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import List


class DenseBlock(nn.Module):
    """Dense block: each layer (BatchNorm, ReLU, 3x3 conv, Dropout(0.0)) sees the concatenation of
    the block input and all previous layers' outputs; returns the full concatenation."""

    def __init__(self, num_layers: int, num_input_features: int, growth_rate: int):
        super().__init__()
        layers = []
        for i in range(num_layers):
            layers.append(self._make_layer(num_input_features + i * growth_rate, growth_rate))
        self.layers = nn.ModuleList(layers)

    def _make_layer(self, in_features: int, growth_rate: int):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(0.0),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features: List[torch.Tensor] = [x]
        for layer in self.layers:
            new_feature = layer(x)
            features.append(new_feature)
            x = torch.cat(features, 1)
        return x


class TransitionLayer(nn.Module):
    """BatchNorm, ReLU, 1x1 conv (no bias), 2x2 average pooling."""

    def __init__(self, num_input_features: int, num_output_features: int):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.transition(x)


class Model(nn.Module):
    """DenseNet-121: 7x7 conv stem with max-pool, dense blocks of 6, 12, 24, 16 layers separated by
    transition layers that halve the channels, final BatchNorm + ReLU, global average pool, Linear."""

    def __init__(self, growth_rate=32, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        num_features = 64
        block_layers = [6, 12, 24, 16]
        dense_blocks = []
        transition_layers = []
        for i, num_layers in enumerate(block_layers):
            dense_blocks.append(DenseBlock(num_layers, num_features, growth_rate))
            num_features = num_features + num_layers * growth_rate
            if i != len(block_layers) - 1:
                transition_layers.append(TransitionLayer(num_features, num_features // 2))
                num_features = num_features // 2
        self.dense_blocks = nn.ModuleList(dense_blocks)
        self.transition_layers = nn.ModuleList(transition_layers)
        self.final_bn = nn.BatchNorm2d(num_features)
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        # Every block but the last is followed by its transition layer.
        for block, transition in zip(self.dense_blocks, self.transition_layers):
            x = transition(block(x))
        x = self.dense_blocks[-1](x)
        x = self.final_bn(x)
        x = F.relu(x, inplace=True)
        x = F.adaptive_avg_pool2d(x, (1, 1)).view(x.size(0), -1)
        x = self.classifier(x)
        return x


batch_size = 10
num_classes = 10
height = 224
width = 224


def get_inputs():
    x = torch.rand(batch_size, 3, height, width)
    return [x]


def get_init_inputs():
    return [32, num_classes]
