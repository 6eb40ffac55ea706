# Build corpus: at::cuda::getCurrentCUDAStream() from <ATen/cuda/CUDAContext.h>, the launch on
# PyTorch's current stream (SELU, L1#27).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void selu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const float alpha = 1.6732632423543772f, scale = 1.0507009873554805f;
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = scale * (v > 0.0f ? v : alpha * (expf(v) - 1.0f));
    }
}

torch::Tensor selu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    selu_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

module = load_inline(name="selu_stream", cpp_sources="torch::Tensor selu(torch::Tensor x);", cuda_sources=cuda_source,
                     functions=["selu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.selu(x)
