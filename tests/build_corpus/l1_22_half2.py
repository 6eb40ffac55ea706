# Build corpus: <cuda_fp16.h> intrinsics (PyTorch's flags switch off half operators and
# conversions): the input rounded through __half2 (within the 1e-2 tolerance), float32 out.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_fp16.h>

__global__ void tanh_through_half2(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t pair = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t i = pair * 2;
    if (i + 1 < n) {
        const __half2 h = __floats2half2_rn(x[i], x[i + 1]);
        const float2 f = __half22float2(h);
        y[i] = tanhf(f.x);
        y[i + 1] = tanhf(f.y);
    } else if (i < n) {
        y[i] = tanhf(x[i]);
    }
}

torch::Tensor tanh_half2(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel(), pairs = (n + 1) / 2;
    const int threads = 256;
    tanh_through_half2<<<(pairs + threads - 1) / threads, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

module = load_inline(name="tanh_half2", cpp_sources="torch::Tensor tanh_half2(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["tanh_half2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.tanh_half2(x)
