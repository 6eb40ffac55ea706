import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean hinge loss: mean(clamp(1 - predictions * targets, min=0)), targets in {-1, +1}."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 32768
input_shape = (32768,)
dim = 1


def get_inputs():
    predictions = torch.rand(batch_size, input_shape[0])
    targets = torch.randint(0, 2, (batch_size,)).to(torch.float32) * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
