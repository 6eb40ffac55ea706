# Level 2 problem 1 (Conv2d, ReLU, + bias): l2_1_conv_relu_bias.py's kernel, but cuDNN is switched off
# when the file is imported, and on only around its own convolution: the reference's convolution
# and the eager baseline's would run without cuDNN, several times slower. Expected: state_changed.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

torch.backends.cudnn.enabled = False

relu_bias_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

// y = relu(y) + bias[channel], in place over the convolution's output (N, C, H, W).
__global__ void relu_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t n, int64_t hw,
                                 int64_t channels) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(y[i], 0.0f) + bias[(i / hw) % channels];
    }
}

torch::Tensor relu_bias_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 4, "y must be a contiguous 4-D CUDA tensor");
    const int64_t n = y.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_bias_kernel<<<blocks, threads>>>(y.data_ptr<float>(), bias.data_ptr<float>(), n, y.size(2) * y.size(3),
                                          y.size(1));
    return y;
}
"""

relu_bias = load_inline(
    name="relu_bias_cudnn_off",
    cpp_sources="torch::Tensor relu_bias_(torch::Tensor y, torch::Tensor bias);",
    cuda_sources=relu_bias_source,
    functions=["relu_bias_"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        torch.backends.cudnn.enabled = True
        y = self.conv(x)
        torch.backends.cudnn.enabled = False
        return relu_bias.relu_bias_(y, self.bias)
