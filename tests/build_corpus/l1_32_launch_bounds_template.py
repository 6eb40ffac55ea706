# Build corpus: a kernel templated on its block size with __launch_bounds__, instantiated for two
# sizes (HardTanh, L1#32).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) hardtanh_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                         float lo, float hi, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)BLOCK + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}

torch::Tensor hardtanh(torch::Tensor x, double lo, double hi) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n >= (int64_t{1} << 20))
        hardtanh_kernel<512><<<(n + 511) / 512, 512>>>(x.data_ptr<float>(), y.data_ptr<float>(), lo, hi, n);
    else
        hardtanh_kernel<128><<<(n + 127) / 128, 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), lo, hi, n);
    return y;
}
"""

module = load_inline(name="hardtanh_blocks", cpp_sources="torch::Tensor hardtanh(torch::Tensor x, double lo, double hi);",
                     cuda_sources=cuda_source, functions=["hardtanh"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.hardtanh(x, -1.0, 1.0)
