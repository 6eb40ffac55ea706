# Build corpus: the user's own -std=c++17 and -lineinfo in extra_cuda_cflags, C++17 in the kernel
# (if constexpr, a constexpr lambda) (Max over a dimension, L1#49).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cfloat>

template <bool kKeepFirst>
__global__ void max_middle(const float* __restrict__ x, float* __restrict__ y, int64_t reduced, int64_t inner) {
    constexpr auto better = [](float a, float b) { return kKeepFirst ? a >= b : a > b; };
    const int64_t o = blockIdx.y, i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= inner) return;
    float m = -FLT_MAX;
    for (int64_t r = 0; r < reduced; ++r) {
        const float v = x[(o * reduced + r) * inner + i];
        if constexpr (kKeepFirst) {
            if (!better(m, v)) m = v;
        } else {
            m = fmaxf(m, v);
        }
    }
    y[o * inner + i] = m;
}

torch::Tensor max_dim(torch::Tensor x, int64_t dim) {
    x = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
    auto sizes = x.sizes().vec();
    const int64_t reduced = sizes[dim];
    sizes.erase(sizes.begin() + dim);
    auto y = torch::empty(sizes, x.options());
    max_middle<false><<<dim3((inner + 255) / 256, outer), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), reduced,
                                                                 inner);
    return y;
}
"""

module = load_inline(name="max_dim", cpp_sources="torch::Tensor max_dim(torch::Tensor x, int64_t dim);",
                     cuda_sources=cuda_source, functions=["max_dim"], extra_cuda_cflags=["-std=c++17", "-lineinfo"])


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return module.max_dim(x, self.dim)
