import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import List


def window_partition(x: torch.Tensor, window_size: int) -> torch.Tensor:
    """(B, H, W, C) -> (num_windows*B, window_size, window_size, C)."""
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


def window_reverse(windows: torch.Tensor, window_size: int, H: int, W: int) -> torch.Tensor:
    """(num_windows*B, window_size, window_size, C) -> (B, H, W, C)."""
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class Mlp(nn.Module):
    """Linear -> GELU -> dropout -> Linear -> dropout."""

    def __init__(self, in_features: int, hidden_features: int, drop: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.drop(self.act(self.fc1(x)))
        return self.drop(self.fc2(x))


class SwinMLPBlock(nn.Module):
    """Swin MLP block: (shifted) window spatial MLP per head, then channel MLP, both residual."""

    def __init__(self, dim: int, input_resolution: List[int], num_heads: int, window_size: int = 7,
                 shift_size: int = 0, mlp_ratio: float = 4.0, drop: float = 0.0):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.num_heads = num_heads
        self.window_size = window_size
        self.shift_size = shift_size
        if min(input_resolution) <= window_size:
            # the window covers the whole map: no partition shift
            self.shift_size = 0
            self.window_size = min(input_resolution)
        # padding (left, right, top, bottom) that realises the shifted windows
        self.padding = [self.window_size - self.shift_size, self.shift_size,
                        self.window_size - self.shift_size, self.shift_size]
        self.norm1 = nn.LayerNorm(dim)
        self.spatial_mlp = nn.Conv1d(num_heads * self.window_size ** 2, num_heads * self.window_size ** 2,
                                     kernel_size=1, groups=num_heads)
        self.drop_path = nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H = self.input_resolution[0]
        W = self.input_resolution[1]
        B, L, C = x.shape
        ws = self.window_size
        nh = self.num_heads
        shortcut = x
        x = self.norm1(x)
        x = x.view(B, H, W, C)
        if self.shift_size > 0:
            shifted_x = F.pad(x, [0, 0, self.padding[0], self.padding[1], self.padding[2], self.padding[3]], "constant", 0.0)
        else:
            shifted_x = x
        _H = shifted_x.shape[1]
        _W = shifted_x.shape[2]
        x_windows = window_partition(shifted_x, ws).view(-1, ws * ws, C)
        # per-head spatial MLP over the tokens of each window
        x_heads = x_windows.view(-1, ws * ws, nh, C // nh).transpose(1, 2)
        x_heads = x_heads.reshape(-1, nh * ws * ws, C // nh)
        mlp_windows = self.spatial_mlp(x_heads)
        mlp_windows = mlp_windows.view(-1, nh, ws * ws, C // nh).transpose(1, 2)
        mlp_windows = mlp_windows.reshape(-1, ws * ws, C)
        mlp_windows = mlp_windows.reshape(-1, ws, ws, C)
        shifted_x = window_reverse(mlp_windows, ws, _H, _W)
        if self.shift_size > 0:
            x = shifted_x[:, self.padding[2]:_H - self.padding[3], self.padding[0]:_W - self.padding[1], :].contiguous()
        else:
            x = shifted_x
        x = x.view(B, H * W, C)
        x = shortcut + self.drop_path(x)
        x = x + self.drop_path(self.mlp(self.norm2(x)))
        return x


class PatchMerging(nn.Module):
    """2x2 neighbourhood concat (4C), LayerNorm(4C), Linear(4C -> 2C, no bias)."""

    def __init__(self, input_resolution: List[int], dim: int):
        super().__init__()
        self.input_resolution = input_resolution
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H = self.input_resolution[0]
        W = self.input_resolution[1]
        B, L, C = x.shape
        x = x.view(B, H, W, C)
        x0 = x[:, 0::2, 0::2, :]
        x1 = x[:, 1::2, 0::2, :]
        x2 = x[:, 0::2, 1::2, :]
        x3 = x[:, 1::2, 1::2, :]
        x = torch.cat([x0, x1, x2, x3], -1)
        x = x.view(B, -1, 4 * C)
        x = self.norm(x)
        return self.reduction(x)


class BasicLayer(nn.Module):
    """One stage: `depth` SwinMLP blocks (shift on odd blocks), optional PatchMerging."""

    def __init__(self, dim: int, input_resolution: List[int], depth: int, num_heads: int, window_size: int,
                 mlp_ratio: float, drop: float, downsample: bool):
        super().__init__()
        self.blocks = nn.ModuleList([
            SwinMLPBlock(dim, input_resolution, num_heads, window_size,
                         0 if i % 2 == 0 else window_size // 2, mlp_ratio, drop)
            for i in range(depth)
        ])
        if downsample:
            self.downsample = PatchMerging(input_resolution, dim)
        else:
            self.downsample = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        if self.downsample is not None:
            x = self.downsample(x)
        return x


class PatchEmbed(nn.Module):
    """Conv patchify (kernel = stride = patch_size), flatten to tokens, LayerNorm."""

    def __init__(self, img_size: int = 224, patch_size: int = 4, in_chans: int = 3, embed_dim: int = 96):
        super().__init__()
        self.patches_resolution = [img_size // patch_size, img_size // patch_size]
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.proj(x).flatten(2).transpose(1, 2)
        return self.norm(x)


class Model(nn.Module):
    """Swin-MLP classifier (embed 96, depths [2, 2, 6, 2], heads [3, 6, 12, 24], window 7)."""

    def __init__(self, img_size: int = 224, patch_size: int = 4, in_chans: int = 3, num_classes: int = 1000,
                 embed_dim: int = 96, depths: List[int] = [2, 2, 6, 2], num_heads: List[int] = [3, 6, 12, 24],
                 window_size: int = 7, mlp_ratio: float = 4.0, drop_rate: float = 0.0):
        super().__init__()
        self.num_layers = len(depths)
        self.num_features = int(embed_dim * 2 ** (self.num_layers - 1))
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        res = self.patch_embed.patches_resolution
        self.pos_drop = nn.Dropout(p=drop_rate)
        layers = []
        for i in range(self.num_layers):
            layers.append(BasicLayer(
                dim=int(embed_dim * 2 ** i),
                input_resolution=[res[0] // (2 ** i), res[1] // (2 ** i)],
                depth=depths[i],
                num_heads=num_heads[i],
                window_size=window_size,
                mlp_ratio=mlp_ratio,
                drop=drop_rate,
                downsample=i < self.num_layers - 1,
            ))
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(self.num_features, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        x = self.pos_drop(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        x = self.avgpool(x.transpose(1, 2))
        x = torch.flatten(x, 1)
        return self.head(x)


batch_size = 10
image_size = 224


def get_inputs():
    x = torch.rand(batch_size, 3, image_size, image_size)
    return [x]


def get_init_inputs():
    return []
