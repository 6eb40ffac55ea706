import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import List, Optional


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


class WindowAttention(nn.Module):
    """Swin V2 window attention: scaled cosine attention, log-spaced continuous position bias (CPB MLP),
    q/v biases (k unbiased)."""

    def __init__(self, dim: int, window_size: List[int], num_heads: int, qkv_bias: bool = True,
                 attn_drop: float = 0.0, proj_drop: float = 0.0, pretrained_window_size: List[int] = [0, 0]):
        super().__init__()
        self.dim = dim
        self.window_size = window_size
        self.pretrained_window_size = pretrained_window_size
        self.num_heads = num_heads
        self.max_logit = math.log(1.0 / 0.01)

        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones((num_heads, 1, 1))), requires_grad=True)
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))

        # relative coordinates table, normalised to [-8, 8] then log-spaced
        rel_h = torch.arange(-(window_size[0] - 1), window_size[0], dtype=torch.float32)
        rel_w = torch.arange(-(window_size[1] - 1), window_size[1], dtype=torch.float32)
        table = torch.stack(torch.meshgrid([rel_h, rel_w], indexing="ij")).permute(1, 2, 0).contiguous().unsqueeze(0)
        if pretrained_window_size[0] > 0:
            table[:, :, :, 0] /= (pretrained_window_size[0] - 1)
            table[:, :, :, 1] /= (pretrained_window_size[1] - 1)
        else:
            table[:, :, :, 0] /= (window_size[0] - 1)
            table[:, :, :, 1] /= (window_size[1] - 1)
        table *= 8
        table = torch.sign(table) * torch.log2(torch.abs(table) + 1.0) / math.log2(8)
        self.register_buffer("relative_coords_table", table)

        # pair-wise relative position index of the tokens inside a window
        coords_h = torch.arange(window_size[0])
        coords_w = torch.arange(window_size[1])
        coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size[0] - 1
        relative_coords[:, :, 1] += window_size[1] - 1
        relative_coords[:, :, 0] *= 2 * window_size[1] - 1
        self.register_buffer("relative_position_index", relative_coords.sum(-1))

        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        if qkv_bias:
            self.q_bias = nn.Parameter(torch.zeros(dim))
            self.v_bias = nn.Parameter(torch.zeros(dim))
        else:
            self.q_bias = None
            self.v_bias = None
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        B_, N, C = x.shape
        qkv_bias: Optional[torch.Tensor] = None
        q_bias = self.q_bias
        v_bias = self.v_bias
        if q_bias is not None and v_bias is not None:
            qkv_bias = torch.cat((q_bias, torch.zeros_like(v_bias), v_bias))
        qkv = F.linear(x, self.qkv.weight, qkv_bias)
        qkv = qkv.reshape(B_, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]

        # cosine attention with a learned, clamped per-head temperature
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        logit_scale = torch.clamp(self.logit_scale, max=self.max_logit).exp()
        attn = attn * logit_scale

        bias_table = self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads)
        ws2 = self.window_size[0] * self.window_size[1]
        bias = bias_table[self.relative_position_index.view(-1)].view(ws2, ws2, -1)
        bias = bias.permute(2, 0, 1).contiguous()
        bias = 16 * torch.sigmoid(bias)
        attn = attn + bias.unsqueeze(0)

        if mask is not None:
            nW = mask.shape[0]
            attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.num_heads, N, N)
            attn = self.softmax(attn)
        else:
            attn = self.softmax(attn)
        attn = self.attn_drop(attn)

        x = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        x = self.proj(x)
        return self.proj_drop(x)


class SwinTransformerBlock(nn.Module):
    """Swin V2 block with post-norm residuals; cyclic shift and attention mask on shifted blocks."""

    def __init__(self, dim: int, input_resolution: List[int], num_heads: int, window_size: int = 7,
                 shift_size: int = 0, mlp_ratio: float = 4.0, qkv_bias: bool = True, drop: float = 0.0,
                 attn_drop: float = 0.0, pretrained_window_size: int = 0):
        super().__init__()
        self.dim = dim
        self.input_resolution = input_resolution
        self.num_heads = num_heads
        self.window_size = window_size
        self.shift_size = shift_size
        self.mlp_ratio = mlp_ratio
        if min(input_resolution) <= window_size:
            self.shift_size = 0
            self.window_size = min(input_resolution)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, [self.window_size, self.window_size], num_heads, qkv_bias,
                                    attn_drop, drop, [pretrained_window_size, pretrained_window_size])
        self.drop_path = nn.Identity()
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop)

        if self.shift_size > 0:
            H, W = input_resolution
            ws = self.window_size
            ss = self.shift_size
            img_mask = torch.zeros((1, H, W, 1))
            slices = (slice(0, -ws), slice(-ws, -ss), slice(-ss, None))
            cnt = 0
            for h in slices:
                for w in slices:
                    img_mask[:, h, w, :] = cnt
                    cnt += 1
            mask_windows = window_partition(img_mask, ws).view(-1, ws * ws)
            attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
            attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))
        else:
            attn_mask = None
        self.register_buffer("attn_mask", attn_mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H = self.input_resolution[0]
        W = self.input_resolution[1]
        B, L, C = x.shape
        ws = self.window_size
        shortcut = x
        x = x.view(B, H, W, C)
        if self.shift_size > 0:
            shifted_x = torch.roll(x, shifts=[-self.shift_size, -self.shift_size], dims=[1, 2])
        else:
            shifted_x = x
        x_windows = window_partition(shifted_x, ws).view(-1, ws * ws, C)
        attn_windows = self.attn(x_windows, self.attn_mask)
        attn_windows = attn_windows.view(-1, ws, ws, C)
        shifted_x = window_reverse(attn_windows, ws, H, W)
        if self.shift_size > 0:
            x = torch.roll(shifted_x, shifts=[self.shift_size, self.shift_size], dims=[1, 2])
        else:
            x = shifted_x
        x = x.view(B, H * W, C)
        x = shortcut + self.drop_path(self.norm1(x))
        x = x + self.drop_path(self.norm2(self.mlp(x)))
        return x


class PatchMerging(nn.Module):
    """Swin V2 patch merging: 2x2 concat (4C), Linear(4C -> 2C, no bias), LayerNorm(2C)."""

    def __init__(self, input_resolution: List[int], dim: int):
        super().__init__()
        self.input_resolution = input_resolution
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(2 * dim)

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
        x = self.reduction(x)
        return self.norm(x)


class BasicLayer(nn.Module):
    """One stage: `depth` Swin V2 blocks (shift on odd blocks), optional PatchMerging."""

    def __init__(self, dim: int, input_resolution: List[int], depth: int, num_heads: int, window_size: int,
                 mlp_ratio: float, qkv_bias: bool, drop: float, attn_drop: float, downsample: bool,
                 pretrained_window_size: int = 0):
        super().__init__()
        self.blocks = nn.ModuleList([
            SwinTransformerBlock(dim, input_resolution, num_heads, window_size,
                                 0 if i % 2 == 0 else window_size // 2, mlp_ratio, qkv_bias, drop,
                                 attn_drop, pretrained_window_size)
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
    """Swin Transformer V2 classifier (embed 96, depths [2, 2, 6, 2], heads [3, 6, 12, 24], window 7)."""

    def __init__(self, img_size: int = 224, patch_size: int = 4, in_chans: int = 3, num_classes: int = 1000,
                 embed_dim: int = 96, depths: List[int] = [2, 2, 6, 2], num_heads: List[int] = [3, 6, 12, 24],
                 window_size: int = 7, mlp_ratio: float = 4.0, qkv_bias: bool = True, drop_rate: float = 0.0,
                 attn_drop_rate: float = 0.0, pretrained_window_sizes: List[int] = [0, 0, 0, 0]):
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
                qkv_bias=qkv_bias,
                drop=drop_rate,
                attn_drop=attn_drop_rate,
                downsample=i < self.num_layers - 1,
                pretrained_window_size=pretrained_window_sizes[i],
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
