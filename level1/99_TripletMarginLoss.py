import torch
import torch.nn as nn


class Model(nn.Module):
    """Triplet margin loss (p = 2, mean reduction)."""

    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss_fn(anchor, positive, negative)


batch_size = 32768
input_shape = (8192,)
dim = 1


def get_inputs():
    scale = torch.rand(())
    anchor = torch.rand(batch_size, input_shape[0]) * scale
    positive = torch.rand(batch_size, input_shape[0])
    negative = torch.rand(batch_size, input_shape[0])
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]  # margin
