# Level 1 problem 19 (ReLU): load_inline is asked to bind a function (relu_cuda) that the sources only
# declare. Expected: compile_error (the extension does not link or load).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
"""

relu = load_inline(name="relu_missing", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                   functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x)
