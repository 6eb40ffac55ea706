# Build corpus: PyTorch's convolution, then one fused kernel for the ReLU and the per-channel bias
# (L2#1, Conv2d then ReLU then + bias), with ATen's own names (at::Tensor, <ATen/ATen.h>).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <ATen/ATen.h>
#include <cuda_runtime.h>

__global__ void relu_add_channel_bias(float* __restrict__ y, const float* __restrict__ bias, int64_t channels,
                                      int64_t plane, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = (i / plane) % channels;
        y[i] = fmaxf(y[i], 0.0f) + bias[c];
    }
}

at::Tensor relu_bias_(at::Tensor y, const at::Tensor& bias) {
    const int64_t n = y.numel(), channels = y.size(1), plane = y.size(2) * y.size(3);
    relu_add_channel_bias<<<132 * 16, 256>>>(y.data_ptr<float>(), bias.data_ptr<float>(), channels, plane, n);
    return y;
}
"""

module = load_inline(name="relu_bias", cpp_sources="at::Tensor relu_bias_(at::Tensor y, const at::Tensor& bias);",
                     cuda_sources=cuda_source, functions=["relu_bias_"])


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return module.relu_bias_(self.conv(x).contiguous(), self.bias)
