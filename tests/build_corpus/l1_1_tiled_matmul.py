# Build corpus: a shared-memory tiled matrix product, templated on the tile size (Square matrix
# multiplication, L1#1).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

template <int TILE>
__global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ float as[TILE][TILE], bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        as[threadIdx.y][threadIdx.x] = row < n && k0 + threadIdx.x < n ? a[row * n + k0 + threadIdx.x] : 0.0f;
        bs[threadIdx.y][threadIdx.x] = col < n && k0 + threadIdx.y < n ? b[(k0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) c[row * n + col] = acc;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    const int n = a.size(0);
    auto c = torch::empty({n, n}, a.options());
    constexpr int kTile = 32;
    const dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
    matmul_tiled<kTile><<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
    return c;
}
"""

module = load_inline(name="matmul_tiled", cpp_sources="torch::Tensor matmul(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=cuda_source, functions=["matmul"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.matmul(a.contiguous(), b.contiguous())
