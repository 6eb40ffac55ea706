# Level 1 problem 36 (RMSNorm over dim 1 of [B, C, H, W], no scale): a program owns BLOCK_S spatial
# positions of one batch item and reduces over the C features (one read, one write when C <= 64).
# Uses @triton.heuristics to pick BLOCK_C and whether the features fit one register tile (ONE_PASS).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics(
    {
        "BLOCK_C": lambda args: min(triton.next_power_of_2(args["C"]), 64),
        "ONE_PASS": lambda args: args["C"] <= 64,
    }
)
@triton.jit
def rmsnorm_kernel(x_ptr, y_ptr, C, S, eps, BLOCK_S: tl.constexpr, BLOCK_C: tl.constexpr,
                   ONE_PASS: tl.constexpr):
    pid_s = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    offs_s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    mask_s = offs_s < S
    base = b * C * S  # element (b, 0, s=0)
    offs_c = tl.arange(0, BLOCK_C)

    if ONE_PASS:
        mask = (offs_c[:, None] < C) & mask_s[None, :]
        offs = base + offs_c[:, None].to(tl.int64) * S + offs_s[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        mean_sq = tl.sum(x * x, axis=0) / C
        rms = tl.sqrt_rn(mean_sq + eps)
        y = x / rms[None, :]
        tl.store(y_ptr + offs, y, mask=mask)
    else:
        sum_sq = tl.zeros([BLOCK_S], dtype=tl.float32)
        for c0 in range(0, C, BLOCK_C):
            cs = c0 + offs_c
            mask = (cs[:, None] < C) & mask_s[None, :]
            offs = base + cs[:, None].to(tl.int64) * S + offs_s[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            sum_sq += tl.sum(x * x, axis=0)
        rms = tl.sqrt_rn(sum_sq / C + eps)
        for c0 in range(0, C, BLOCK_C):
            cs = c0 + offs_c
            mask = (cs[:, None] < C) & mask_s[None, :]
            offs = base + cs[:, None].to(tl.int64) * S + offs_s[None, :]
            x = tl.load(x_ptr + offs, mask=mask, other=0.0)
            tl.store(y_ptr + offs, x / rms[None, :], mask=mask)


def triton_rmsnorm_dim1(x: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    B, C = x.shape[0], x.shape[1]
    S = x.numel() // (B * C) if B * C > 0 else 0  # product of the trailing dims
    if x.numel() == 0:
        return y
    BLOCK_S = 128
    grid = (triton.cdiv(S, BLOCK_S), B)
    rmsnorm_kernel[grid](x, y, C, S, eps, BLOCK_S=BLOCK_S, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_rmsnorm_dim1(x, self.eps)
