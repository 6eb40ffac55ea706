import torch
import torch.nn as nn
from typing import List


class Model(nn.Module):
    """DenseNet dense block: each layer (BatchNorm, ReLU, 3x3 conv, Dropout(0.0)) sees the
    concatenation of the input and all previous layers' outputs; returns the full concatenation."""

    def __init__(self, num_layers, num_input_features, growth_rate):
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


batch_size = 10
num_layers = 6
num_input_features = 32
growth_rate = 32
height = 224
width = 224


def get_inputs():
    x = torch.rand(batch_size, num_input_features, height, width)
    return [x]


def get_init_inputs():
    return [num_layers, num_input_features, growth_rate]
