import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolutional ViT: conv patchify, flatten, linear projection to one token, cls token,
    6 TransformerEncoderLayers (batch_first=True: the sequence is the cls token and one patch token),
    linear head on token 0. The number of patches follows from image_size."""

    def __init__(self, num_classes: int, embed_dim: int = 512, num_heads: int = 8, num_layers: int = 6,
                 mlp_ratio: float = 4.0, patch_size: int = 4, in_channels: int = 3, image_size: int = 32):
        super().__init__()
        self.patch_size = patch_size
        self.conv1 = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (image_size // patch_size) ** 2
        self.linear_proj = nn.Linear(embed_dim * num_patches, embed_dim)
        self.transformer_layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads,
                                       dim_feedforward=int(embed_dim * mlp_ratio), dropout=0.0,
                                       batch_first=True)
            for _ in range(num_layers)
        ])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.fc_out = nn.Linear(embed_dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B = x.size(0)
        x = self.conv1(x)
        x = x.flatten(start_dim=1)
        x = self.linear_proj(x)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x.unsqueeze(1)), dim=1)
        for layer in self.transformer_layers:
            x = layer(x)
        x = x[:, 0]
        return self.fc_out(x)


batch_size = 10
image_size = 32
embed_dim = 128
in_channels = 3
num_heads = 4
num_classes = 1000


def get_inputs():
    x = torch.rand(batch_size, in_channels, image_size, image_size)
    return [x]


def get_init_inputs():
    return [num_classes, embed_dim, num_heads]
