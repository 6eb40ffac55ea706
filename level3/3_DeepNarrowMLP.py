import torch
import torch.nn as nn


class Model(nn.Module):
    """Deep, narrow MLP: Linear + ReLU for each hidden size, then a final Linear."""

    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


batch_size = 1024
input_size = 8192
hidden_layer_sizes = [1024] * 16
output_size = 8192


def get_inputs():
    x = torch.rand(batch_size, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]
