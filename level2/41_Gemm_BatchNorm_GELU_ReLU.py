import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, BatchNorm1d, GELU, ReLU."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = self.batch_norm(x)
        x = F.gelu(x)
        x = torch.relu(x)
        return x


batch_size = 16384
in_features = 4096
out_features = 4096


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
