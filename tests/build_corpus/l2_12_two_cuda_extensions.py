# Build corpus: two CUDA extensions in one file (L2#12, Linear then * multiplier then LeakyReLU):
# the product is cuBLAS's (torch.addmm), one extension scales, the other applies the LeakyReLU.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

scale = load_inline(
    name="scale_in_place",
    cpp_sources="torch::Tensor scale_(torch::Tensor y, double factor);",
    cuda_sources="""
#include <torch/extension.h>

__global__ void scale_kernel(float* y, float factor, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] *= factor;
}

torch::Tensor scale_(torch::Tensor y, double factor) {
    const int64_t n = y.numel();
    scale_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), (float)factor, n);
    return y;
}
""",
    functions=["scale_"],
)

leaky = load_inline(
    name="leaky_in_place",
    cpp_sources="torch::Tensor leaky_relu_(torch::Tensor y, double slope);",
    cuda_sources="""
#include <torch/extension.h>

__global__ void leaky_kernel(float* y, float slope, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n && y[i] < 0.0f) y[i] *= slope;
}

torch::Tensor leaky_relu_(torch::Tensor y, double slope) {
    const int64_t n = y.numel();
    leaky_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), (float)slope, n);
    return y;
}
""",
    functions=["leaky_relu_"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t())
        return leaky.leaky_relu_(scale.scale_(y, self.multiplier), self.negative_slope)
