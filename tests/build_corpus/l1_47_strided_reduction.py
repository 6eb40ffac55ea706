# Build corpus: a reduction over the middle dimension with strided reads, the output keeping the
# dimension (Sum over a dimension, L1#47).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void sum_middle(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t reduced,
                           int64_t inner) {
    const int64_t o = blockIdx.y, i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= inner) return;
    const float* base = x + o * reduced * inner + i;
    float s = 0.0f;
    for (int64_t r = 0; r < reduced; ++r) s += base[r * inner];
    y[o * inner + i] = s;
}

torch::Tensor sum_dim(torch::Tensor x, int64_t dim) {
    x = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    auto sizes = x.sizes().vec();
    sizes[dim] = 1;
    auto y = torch::empty(sizes, x.options());
    sum_middle<<<dim3((inner + 255) / 256, outer), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer,
                                                          x.size(dim), inner);
    return y;
}
"""

module = load_inline(name="sum_dim", cpp_sources="torch::Tensor sum_dim(torch::Tensor x, int64_t dim);",
                     cuda_sources=cuda_source, functions=["sum_dim"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return module.sum_dim(x, self.dim)
