# Build corpus: AT_DISPATCH_FLOATING_TYPES_AND_HALF with <cuda_fp16.h> (Softplus, L1#29): the
# kernel computes in float whatever the storage type.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_fp16.h>

template <typename scalar_t>
__global__ void softplus_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = static_cast<float>(x[i]);
        y[i] = static_cast<scalar_t>(v > 20.0f ? v : log1pf(expf(v)));
    }
}

torch::Tensor softplus(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "softplus", ([&] {
        softplus_kernel<scalar_t><<<(n + 255) / 256, 256>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    return y;
}
"""

module = load_inline(name="softplus_half", cpp_sources="torch::Tensor softplus(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["softplus"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.softplus(x)
