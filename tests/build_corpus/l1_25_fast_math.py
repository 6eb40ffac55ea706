# Build corpus: extra_cuda_cflags=["-O3", "--use_fast_math"] (Swish, L1#25), __expf.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = v / (1.0f + __expf(-v));
    }
}

torch::Tensor swish(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    swish_kernel<<<132 * 8, 512>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

module = load_inline(name="swish_fast_math", cpp_sources="torch::Tensor swish(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["swish"], extra_cuda_cflags=["-O3", "--use_fast_math"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.swish(x)
