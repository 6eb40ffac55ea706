# Build corpus: a grid-wide sum of squares with atomicAdd, then a second kernel dividing by its
# square root (Frobenius norm, L1#37).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void sum_squares(const float* __restrict__ x, float* __restrict__ total, int64_t n) {
    __shared__ float partial[256];
    float s = 0.0f;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        s += x[i] * x[i];
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int stride = 128; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, partial[0]);
}

__global__ void divide_by_norm(const float* __restrict__ x, const float* __restrict__ total, float* __restrict__ y,
                               int64_t n) {
    const float inv = rsqrtf(*total);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = x[i] * inv;
}

torch::Tensor frobenius_normalise(torch::Tensor x) {
    auto total = torch::zeros({1}, x.options());
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    sum_squares<<<1024, 256>>>(x.data_ptr<float>(), total.data_ptr<float>(), n);
    divide_by_norm<<<1024, 256>>>(x.data_ptr<float>(), total.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

module = load_inline(name="frobenius", cpp_sources="torch::Tensor frobenius_normalise(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["frobenius_normalise"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.frobenius_normalise(x)
