# Build corpus: functions given as a dict (name -> docstring), verbose=True, and the launch
# configuration computed in a helper of the C++ file.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void leaky_relu_grid_stride(const float* x, float* y, float slope, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f) + slope * fminf(x[i], 0.0f);
    }
}

void launch_leaky_relu(const float* x, float* y, float slope, int64_t n, int blocks, int threads) {
    leaky_relu_grid_stride<<<blocks, threads>>>(x, y, slope, n);
}
"""

cpp_source = """
#include <torch/extension.h>
#include <algorithm>

void launch_leaky_relu(const float* x, float* y, float slope, int64_t n, int blocks, int threads);

torch::Tensor leaky_relu(torch::Tensor x, double slope) {
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((x.numel() + threads - 1) / threads, 65535);
    launch_leaky_relu(x.data_ptr<float>(), y.data_ptr<float>(), (float)slope, x.numel(), blocks, threads);
    return y;
}
"""

module = load_inline(name="leaky_relu_dict", cpp_sources=cpp_source, cuda_sources=cuda_source,
                     functions={"leaky_relu": "LeakyReLU on a contiguous float32 tensor"}, verbose=True)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return module.leaky_relu(x, self.negative_slope)
