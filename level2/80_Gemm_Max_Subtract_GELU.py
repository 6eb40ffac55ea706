import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, max over max_dim (keepdim), subtract its mean over dim 1, GELU."""

    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        x = F.gelu(x)
        return x


batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


def get_inputs():
    x = torch.rand(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features, max_dim]
