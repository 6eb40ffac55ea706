import torch
import torch.nn as nn


class Model(nn.Module):
    """Multi-head self-attention over the H*W positions of a feature map, residual, LayerNorm."""

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        x = x.view(B, C, H * W).permute(2, 0, 1)  # (seq, batch, embed)
        attn_output, _ = self.attn(x, x, x)
        x = self.norm(attn_output + x)
        x = x.permute(1, 2, 0).view(B, C, H, W)
        return x


embed_dim = 128
num_heads = 4
batch_size = 2
num_channels = embed_dim
image_height = 128
image_width = 128


def get_inputs():
    x = torch.rand(batch_size, num_channels, image_height, image_width)
    return [x]


def get_init_inputs():
    return [embed_dim, num_heads]
