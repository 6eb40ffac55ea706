# Build corpus: two load_inline calls in one file: a C++-only helper that checks the input and a
# CUDA extension with the kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

checks = load_inline(
    name="relu_checks",
    cpp_sources="""
void check_input(const torch::Tensor& x) {
    TORCH_CHECK(x.is_cuda(), "x must be on the GPU");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
}
""",
    functions=["check_input"],
)

kernels = load_inline(
    name="relu_kernel_only",
    cpp_sources="torch::Tensor relu(torch::Tensor x);",
    cuda_sources="""
#include <torch/extension.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
""",
    functions=["relu"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        checks.check_input(x)
        return kernels.relu(x.contiguous())
