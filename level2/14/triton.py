# Level 2 problem 14 (x @ W^T, / 2, sum over features keepdim, * scale): the feature sum moves inside
# the product (sum_j x.W[j] = x.(sum_j W[j])), so a helper launches two kernels: a column sum of W,
# then one program per row of x for the dot product with that sum, the / 2 and the scaling.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(w_ptr, out_ptr, R, K, stride_wr, stride_wk, BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    # out[k] = sum_r W[r, k] for BLOCK_K columns, walking all R rows in BLOCK_R-row tiles.
    pid = tl.program_id(0)
    offs_k = pid * BLOCK_K + tl.arange(0, BLOCK_K)
    mask_k = offs_k < K
    offs_r = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R, BLOCK_K], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + offs_r
        ptrs = w_ptr + rows[:, None].to(tl.int64) * stride_wr + offs_k[None, :] * stride_wk
        acc += tl.load(ptrs, mask=(rows[:, None] < R) & mask_k[None, :], other=0.0)
    tl.store(out_ptr + offs_k, tl.sum(acc, axis=0), mask=mask_k)


@triton.jit
def row_dot_scale_kernel(x_ptr, v_ptr, out_ptr, K, stride_xm, stride_xk, scale, BLOCK_K: tl.constexpr):
    # out[m] = (x[m, :] . v) / 2 * scale
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    cols = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs = k0 + cols
        mask = offs < K
        a = tl.load(x_row + offs * stride_xk, mask=mask, other=0.0)
        v = tl.load(v_ptr + offs, mask=mask, other=0.0)
        acc += a * v
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, (total / 2.0) * scale)


def triton_gemm_div_sum_scale(x, weight, scaling_factor):
    x = x.contiguous()
    weight = weight.contiguous()
    M, K = x.shape
    R = weight.shape[0]  # hidden_size: the rows of W that the feature sum runs over
    out = torch.empty((M, 1), dtype=x.dtype, device=x.device)
    if M == 0:
        return out
    w_sum = torch.empty((K,), dtype=torch.float32, device=x.device)
    if K > 0:
        BLOCK_R, BLOCK_KC = 64, 32
        column_sum_kernel[(triton.cdiv(K, BLOCK_KC),)](
            weight, w_sum, R, K, weight.stride(0), weight.stride(1),
            BLOCK_R=BLOCK_R, BLOCK_K=BLOCK_KC, num_warps=4,
        )
    row_dot_scale_kernel[(M,)](
        x, w_sum, out, K, x.stride(0), x.stride(1), float(scaling_factor),
        BLOCK_K=2048, num_warps=8,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_gemm_div_sum_scale(x, self.weight, self.scaling_factor)
