# Level 2 problem 12 (Linear, * 2.0, LeakyReLU(0.1)) in KernelBench's format: a correct ModelNew. The
# matrix product is cuBLAS's (torch.matmul); the bias, the multiply and the LeakyReLU are one pass of
# the extension's kernel over the product, in place.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

epilogue_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void bias_mul_leaky_relu_kernel(float* __restrict__ y, const float* __restrict__ bias, float multiplier,
                                           float slope, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = (y[i] + bias[i % cols]) * multiplier;
        y[i] = v > 0.0f ? v : v * slope;
    }
}

torch::Tensor bias_mul_leaky_relu_(torch::Tensor y, torch::Tensor bias, double multiplier, double slope) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 2, "y must be a contiguous 2-D CUDA tensor");
    const int64_t rows = y.size(0), cols = y.size(1);
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((rows * cols + threads - 1) / threads, 132 * 32);
    bias_mul_leaky_relu_kernel<<<blocks, threads>>>(y.data_ptr<float>(), bias.data_ptr<float>(), (float)multiplier,
                                                   (float)slope, rows, cols);
    return y;
}
"""

epilogue_cpp_source = (
    "torch::Tensor bias_mul_leaky_relu_(torch::Tensor y, torch::Tensor bias, double multiplier, double slope);"
)

epilogue = load_inline(
    name="bias_mul_leaky_relu",
    cpp_sources=epilogue_cpp_source,
    cuda_sources=epilogue_source,
    functions=["bias_mul_leaky_relu_"],
    verbose=True,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.matmul(x, self.gemm.weight.t())
        return epilogue.bias_mul_leaky_relu_(y, self.gemm.bias, self.multiplier, self.negative_slope)
