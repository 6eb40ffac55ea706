import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Mean cross-entropy loss of logits against class indices."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(predictions, targets)


batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1


def get_inputs():
    predictions = torch.rand(batch_size, input_shape[0])
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []
