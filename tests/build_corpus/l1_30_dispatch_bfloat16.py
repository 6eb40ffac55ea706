# Build corpus: bfloat16 and half through AT_DISPATCH_FLOATING_TYPES_AND2 with <cuda_bf16.h>
# (Softsign, L1#30).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <typename scalar_t>
__global__ void softsign_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = static_cast<float>(x[i]);
        y[i] = static_cast<scalar_t>(v / (1.0f + fabsf(v)));
    }
}

torch::Tensor softsign(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16, x.scalar_type(), "softsign", ([&] {
        softsign_kernel<scalar_t><<<(n + 255) / 256, 256>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    return y;
}
"""

module = load_inline(name="softsign_bf16", cpp_sources="torch::Tensor softsign(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["softsign"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.softsign(x)
