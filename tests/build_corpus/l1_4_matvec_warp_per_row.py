# Build corpus: one warp per row with float4 loads and a shuffle reduction (Matrix-vector product,
# L1#4).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void matvec_warp_per_row(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                    int64_t rows, int64_t cols) {
    const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = a + row * cols;
    float s = 0.0f;
    const int64_t cols4 = cols / 4;
    for (int64_t j = lane; j < cols4; j += 32) {
        const float4 u = reinterpret_cast<const float4*>(r)[j], v = reinterpret_cast<const float4*>(b)[j];
        s += u.x * v.x + u.y * v.y + u.z * v.z + u.w * v.w;
    }
    for (int64_t j = cols4 * 4 + lane; j < cols; j += 32) s += r[j] * b[j];
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffff, s, offset);
    if (lane == 0) c[row] = s;
}

torch::Tensor matvec(torch::Tensor a, torch::Tensor b) {
    const int64_t rows = a.size(0), cols = a.size(1);
    auto c = torch::empty({rows, 1}, a.options());
    const int warps = 8;
    matvec_warp_per_row<<<(rows + warps - 1) / warps, warps * 32>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                                    c.data_ptr<float>(), rows, cols);
    return c;
}
"""

module = load_inline(name="matvec", cpp_sources="torch::Tensor matvec(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=cuda_source, functions=["matvec"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.matvec(a.contiguous(), b.contiguous())
