# Level 1 problem 88 (minGPT "new GELU", tanh approximation): one elementwise kernel,
# y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), tanh computed as 1 - 2 / (exp(2u) + 1).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def new_gelu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    u = 0.7978845608028654 * (x + 0.044715 * (x * x * x))
    # tanh(u) = 1 - 2 / (exp(2u) + 1): exp overflow to inf gives 1, underflow to 0 gives -1.
    t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)
    y = 0.5 * x * (1.0 + t)
    tl.store(y_ptr + offs, y, mask=mask)


def triton_new_gelu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return y
    BLOCK = 4096
    grid = (triton.cdiv(n, BLOCK),)
    new_gelu_kernel[grid](x, y, n, BLOCK=BLOCK, num_warps=8)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_new_gelu(x)
