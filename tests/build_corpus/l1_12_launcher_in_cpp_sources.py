# Build corpus: a 2-D grid scaling each row of B by one element of the diagonal (diag(A) @ B, L1#12),
# the kernel and its launcher split between the CUDA and the C++ sources.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <cuda_runtime.h>
#include <cstdint>

__global__ void scale_rows(const float* __restrict__ diag, const float* __restrict__ b, float* __restrict__ c,
                           int64_t rows, int64_t cols) {
    const int64_t r = blockIdx.y, j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (r < rows && j < cols) c[r * cols + j] = diag[r] * b[r * cols + j];
}

void scale_rows_launch(const float* diag, const float* b, float* c, int64_t rows, int64_t cols) {
    scale_rows<<<dim3((cols + 255) / 256, rows), 256>>>(diag, b, c, rows, cols);
}
"""

cpp_source = """
void scale_rows_launch(const float* diag, const float* b, float* c, int64_t rows, int64_t cols);

torch::Tensor diag_matmul(torch::Tensor a, torch::Tensor b) {
    b = b.contiguous();
    auto c = torch::empty_like(b);
    scale_rows_launch(a.contiguous().data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), b.size(0), b.size(1));
    return c;
}
"""

module = load_inline(name="diag_matmul", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["diag_matmul"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.diag_matmul(a, b)
