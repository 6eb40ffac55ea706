# Level 1 problem 23 (Softmax over dim 1 of [4096, 393216]): one program per row; pass 1 keeps an
# online per-lane (max, sum of exp) over BLOCK-wide chunks, pass 2 writes exp(x - max) / sum.
# Uses @triton.autotune over BLOCK / num_warps, keyed on the row length.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=16),
        triton.Config({"BLOCK": 8192}, num_warps=16),
    ],
    key=["n_cols"],
)
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_xr, stride_yr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xr
    y_row = y_ptr + row * stride_yr
    cols = tl.arange(0, BLOCK)

    # Pass 1: per-lane running max m and sum s of exp(x - m).
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf"))
        m_new = tl.maximum(m, x)
        live = m_new > float("-inf")  # lanes that have seen a finite value (avoids -inf - -inf)
        alpha = tl.where(live, tl.exp(m - m_new), 0.0)
        p = tl.where(live, tl.exp(x - m_new), 0.0)
        s = s * alpha + p
        m = m_new

    # Combine the lanes.
    row_max = tl.max(m, axis=0)
    lane_scale = tl.where(m > float("-inf"), tl.exp(m - row_max), 0.0)
    row_sum = tl.sum(s * lane_scale, axis=0)
    inv_sum = 1.0 / row_sum

    # Pass 2: normalise and write.
    for start in range(0, n_cols, BLOCK):
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=float("-inf"))
        y = tl.exp(x - row_max) * inv_sum
        tl.store(y_row + offs, y, mask=mask)


def triton_softmax_dim1(x: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2, "softmax over dim 1 of a 2-D tensor"
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    if n_rows == 0 or n_cols == 0:
        return y
    softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0))
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.dim = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_softmax_dim1(x)
