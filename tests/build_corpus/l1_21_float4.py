# Build corpus: float4 loads and stores (Sigmoid, L1#21), a scalar tail loop.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float sigmoidf(float v) { return 1.0f / (1.0f + expf(-v)); }

__global__ void sigmoid_vec4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        v.x = sigmoidf(v.x); v.y = sigmoidf(v.y); v.z = sigmoidf(v.z); v.w = sigmoidf(v.w);
        y[i] = v;
    }
}

__global__ void sigmoid_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    const int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = sigmoidf(x[i]);
}

torch::Tensor sigmoid_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel(), n4 = n / 4;
    const int threads = 256;
    if (n4 > 0)
        sigmoid_vec4<<<(n4 + threads - 1) / threads, threads>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()),
                                                                reinterpret_cast<float4*>(y.data_ptr<float>()), n4);
    if (n % 4)
        sigmoid_tail<<<1, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n4 * 4, n);
    return y;
}
"""

sigmoid = load_inline(name="sigmoid_vec4", cpp_sources="torch::Tensor sigmoid_cuda(torch::Tensor x);",
                      cuda_sources=cuda_source, functions=["sigmoid_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return sigmoid.sigmoid_cuda(x)
