# Build corpus: pooling parameters from get_init_inputs() passed to the kernel, padding counted as
# PyTorch's AvgPool1d counts it (Average pooling 1D, L1#44).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void avg_pool_1d(const float* __restrict__ x, float* __restrict__ y, int64_t length, int64_t out_length,
                            int kernel, int stride, int padding, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t row = i / out_length, o = i % out_length;
    const int64_t start = o * stride - padding;
    float s = 0.0f;
    for (int k = 0; k < kernel; ++k) {
        const int64_t p = start + k;
        if (p >= 0 && p < length) s += x[row * length + p];
    }
    y[i] = s / kernel;
}

torch::Tensor avg_pool(torch::Tensor x, int64_t kernel, int64_t stride, int64_t padding) {
    const int64_t length = x.size(2), out_length = (length + 2 * padding - kernel) / stride + 1;
    auto y = torch::empty({x.size(0), x.size(1), out_length}, x.options());
    const int64_t n = y.numel();
    avg_pool_1d<<<(n + 255) / 256, 256>>>(x.contiguous().data_ptr<float>(), y.data_ptr<float>(), length, out_length,
                                          (int)kernel, (int)stride, (int)padding, n);
    return y;
}
"""

module = load_inline(name="avg_pool_1d",
                     cpp_sources="torch::Tensor avg_pool(torch::Tensor x, int64_t kernel, int64_t stride, int64_t padding);",
                     cuda_sources=cuda_source, functions=["avg_pool"])


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return module.avg_pool(x, self.kernel_size, self.stride, self.padding)
