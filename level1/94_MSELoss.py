import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error between predictions and targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    predictions = torch.rand(batch_size, input_shape[0]) * scale
    targets = torch.rand(batch_size, input_shape[0])
    return [predictions, targets]


def get_init_inputs():
    return []
