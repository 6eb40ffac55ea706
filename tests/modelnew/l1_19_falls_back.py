# Level 1 problem 19 (ReLU): a ModelNew whose kernel refuses inputs past 32-bit indexing (L1#19 has
# 1.6e9 elements) and whose forward then falls back to PyTorch in a try/except.
# Expected: no_custom_kernel (no kernel of the submission ran).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.numel() < (int64_t(1) << 30), "relu_cuda: too many elements for 32-bit indices");
    auto y = torch::empty_like(x);
    const int n = (int)x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu = load_inline(name="relu_small", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);", cuda_sources=source,
                   functions=["relu_cuda"])


class ModelNew(nn.Module):
    def forward(self, x):
        try:
            return relu.relu_cuda(x)
        except RuntimeError:
            return torch.relu(x)
