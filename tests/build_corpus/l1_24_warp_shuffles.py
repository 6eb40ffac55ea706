# Build corpus: warp shuffles (__shfl_xor_sync) in an online log-softmax, one block per row
# (LogSoftmax, L1#24).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cfloat>

__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    const float mm = fmaxf(m, m2);
    s = s * expf(m - mm) + s2 * expf(m2 - mm);
    m = mm;
}

__global__ void log_softmax_rows(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float warp_m[32], warp_s[32];
    const float* row = x + blockIdx.x * cols;
    float m = -FLT_MAX, s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) combine(m, s, row[j], 1.0f);
    for (int offset = 16; offset > 0; offset /= 2)
        combine(m, s, __shfl_xor_sync(0xffffffff, m, offset), __shfl_xor_sync(0xffffffff, s, offset));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_m[warp] = m, warp_s[warp] = s;
    __syncthreads();
    if (warp == 0) {
        m = lane < blockDim.x / 32 ? warp_m[lane] : -FLT_MAX;
        s = lane < blockDim.x / 32 ? warp_s[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2)
            combine(m, s, __shfl_xor_sync(0xffffffff, m, offset), __shfl_xor_sync(0xffffffff, s, offset));
        if (lane == 0) warp_m[0] = m + logf(s);
    }
    __syncthreads();
    const float log_sum = warp_m[0];
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) y[blockIdx.x * cols + j] = row[j] - log_sum;
}

torch::Tensor log_softmax(torch::Tensor x) {
    auto y = torch::empty_like(x);
    log_softmax_rows<<<x.size(0), 1024>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}
"""

module = load_inline(name="log_softmax_shfl", cpp_sources="torch::Tensor log_softmax(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["log_softmax"])


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()

    def forward(self, x):
        return module.log_softmax(x)
