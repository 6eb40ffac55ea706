# Build corpus: one elementwise kernel (LeakyReLU, L1#20), torch/extension.h in the CUDA source, the
# slope passed as a double.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void leaky_relu_kernel(const float* __restrict__ x, float* __restrict__ y, float slope, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : v * slope;
    }
}

torch::Tensor leaky_relu_cuda(torch::Tensor x, double slope) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 512;
    const int64_t blocks = (n + threads - 1) / threads;
    leaky_relu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)slope, n);
    return y;
}
"""

cpp_source = "torch::Tensor leaky_relu_cuda(torch::Tensor x, double slope);"

leaky_relu = load_inline(name="leaky_relu", cpp_sources=cpp_source, cuda_sources=cuda_source,
                         functions=["leaky_relu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return leaky_relu.leaky_relu_cuda(x, self.negative_slope)
