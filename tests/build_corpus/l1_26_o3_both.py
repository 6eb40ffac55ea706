# Build corpus: extra_cflags=["-O3"] for the C++ file as well as extra_cuda_cflags=["-O3"] (GELU,
# L1#26, the erf form PyTorch's default computes).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

torch::Tensor gelu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    gelu_kernel<<<(n + 1023) / 1024, 1024>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

module = load_inline(name="gelu_o3", cpp_sources="torch::Tensor gelu(torch::Tensor x);", cuda_sources=cuda_source,
                     functions=["gelu"], extra_cflags=["-O3"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.gelu(x)
