# Level 1 problem 19 (ReLU): a ModelNew whose CUDA does not compile (a missing semicolon).
# Expected: compile_error, with nvcc's log in the record.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu = load_inline(name="relu_broken", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                   functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x)
