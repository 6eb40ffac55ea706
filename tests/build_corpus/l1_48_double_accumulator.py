# Build corpus: the mean over a dimension with a templated accumulator type (double) and the
# dimension dropped from the output (Mean over a dimension, L1#48).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

template <typename acc_t>
__global__ void mean_middle(const float* __restrict__ x, float* __restrict__ y, int64_t reduced, int64_t inner) {
    const int64_t o = blockIdx.y, i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= inner) return;
    acc_t s = 0;
    for (int64_t r = 0; r < reduced; ++r) s += x[(o * reduced + r) * inner + i];
    y[o * inner + i] = static_cast<float>(s / reduced);
}

torch::Tensor mean_dim(torch::Tensor x, int64_t dim) {
    x = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    auto sizes = x.sizes().vec();
    const int64_t reduced = sizes[dim];
    sizes.erase(sizes.begin() + dim);
    auto y = torch::empty(sizes, x.options());
    mean_middle<double><<<dim3((inner + 127) / 128, outer), 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), reduced,
                                                                   inner);
    return y;
}
"""

module = load_inline(name="mean_dim", cpp_sources="torch::Tensor mean_dim(torch::Tensor x, int64_t dim);",
                     cuda_sources=cuda_source, functions=["mean_dim"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return module.mean_dim(x, self.dim)
