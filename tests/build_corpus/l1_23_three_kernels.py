# Build corpus: several kernels in one source (Softmax, L1#23): a row's maximum, the sum of
# exponentials, then the normalisation, each a block-wide shared-memory reduction.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cfloat>

constexpr int kThreads = 1024;

__device__ float block_reduce(float v, float* shared, bool take_max) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            shared[threadIdx.x] = take_max ? fmaxf(shared[threadIdx.x], shared[threadIdx.x + stride])
                                           : shared[threadIdx.x] + shared[threadIdx.x + stride];
        __syncthreads();
    }
    const float result = shared[0];
    __syncthreads();
    return result;
}

__global__ void row_max(const float* __restrict__ x, float* __restrict__ maxima, int64_t cols) {
    __shared__ float shared[kThreads];
    const float* row = x + blockIdx.x * cols;
    float m = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce(m, shared, true);
    if (threadIdx.x == 0) maxima[blockIdx.x] = m;
}

__global__ void row_sum_exp(const float* __restrict__ x, const float* __restrict__ maxima, float* __restrict__ sums,
                            int64_t cols) {
    __shared__ float shared[kThreads];
    const float* row = x + blockIdx.x * cols;
    const float m = maxima[blockIdx.x];
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(row[j] - m);
    s = block_reduce(s, shared, false);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void normalise(const float* __restrict__ x, const float* __restrict__ maxima, const float* __restrict__ sums,
                          float* __restrict__ y, int64_t cols) {
    const int64_t r = blockIdx.y;
    const float m = maxima[r], inv = 1.0f / sums[r];
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < cols; j += (int64_t)gridDim.x * blockDim.x)
        y[r * cols + j] = expf(x[r * cols + j] - m) * inv;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2 && x.is_contiguous(), "a contiguous 2-D tensor");
    const int64_t rows = x.size(0), cols = x.size(1);
    auto maxima = torch::empty({rows}, x.options());
    auto sums = torch::empty({rows}, x.options());
    auto y = torch::empty_like(x);
    row_max<<<rows, kThreads>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), cols);
    row_sum_exp<<<rows, kThreads>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), sums.data_ptr<float>(), cols);
    normalise<<<dim3(32, rows), 256>>>(x.data_ptr<float>(), maxima.data_ptr<float>(), sums.data_ptr<float>(),
                                       y.data_ptr<float>(), cols);
    return y;
}
"""

module = load_inline(name="softmax_three_kernels", cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["softmax_rows"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.softmax_rows(x)
