# Level 1 problem 19 (ReLU): a ModelNew whose kernel uses its input as scratch space: it writes the
# right answer, and zeros over the input it has read. Expected: input_mutated.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_scratch_kernel(float* x, float* y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
        x[i] = 0.0f;
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_scratch_kernel<<<4224, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""

relu = load_inline(name="relu_scratch", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                   functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cuda(x)
