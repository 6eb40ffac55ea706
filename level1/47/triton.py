# Level 1 problem 47 (sum over dim 1, keepdim, of [128, 4096, 4095]): x viewed as [outer, R, inner];
# a program owns BLOCK_I neighbouring inner columns of one outer index and walks the R rows in
# BLOCK_R-row tiles, accumulating in fp32 (int64 offsets: the tensor has 2.1e9 elements).
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_mid_dim_kernel(x_ptr, y_ptr, R, INNER, n_i_tiles, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    pid = tl.program_id(0)
    outer = (pid // n_i_tiles).to(tl.int64)
    pid_i = pid % n_i_tiles
    offs_i = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    mask_i = offs_i < INNER
    offs_r = tl.arange(0, BLOCK_R)
    x_base = x_ptr + outer * R * INNER  # element (outer, 0, 0)

    acc = tl.zeros([BLOCK_R, BLOCK_I], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + offs_r
        ptrs = x_base + rows[:, None].to(tl.int64) * INNER + offs_i[None, :]
        mask = (rows[:, None] < R) & mask_i[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + outer * INNER + offs_i, total, mask=mask_i)


def triton_sum_keepdim(x: torch.Tensor, dim: int) -> torch.Tensor:
    x = x.contiguous()
    dim = dim % x.dim()
    shape = list(x.shape)
    outer = math.prod(shape[:dim])
    R = shape[dim]
    inner = math.prod(shape[dim + 1:])
    out_shape = shape[:dim] + [1] + shape[dim + 1:]
    y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    if outer == 0 or inner == 0:
        return y
    BLOCK_I = min(64, triton.next_power_of_2(inner))
    BLOCK_R = max(1, 2048 // BLOCK_I)
    n_i_tiles = triton.cdiv(inner, BLOCK_I)
    grid = (outer * n_i_tiles,)
    sum_mid_dim_kernel[grid](x, y, R, inner, n_i_tiles, BLOCK_R=BLOCK_R, BLOCK_I=BLOCK_I, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_sum_keepdim(x, self.dim)
