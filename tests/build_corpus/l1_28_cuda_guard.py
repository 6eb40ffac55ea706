# Build corpus: the usual input checks (CHECK_CUDA, CHECK_CONTIGUOUS macros on TORCH_CHECK) and a
# c10::cuda::CUDAGuard on the input's device (HardSigmoid, L1#28).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>

#define CHECK_CUDA(x) TORCH_CHECK(x.device().is_cuda(), #x " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) CHECK_CUDA(x); CHECK_CONTIGUOUS(x)

__global__ void hardsigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i] / 6.0f + 0.5f, 0.0f), 1.0f);
}

torch::Tensor hardsigmoid(torch::Tensor x) {
    CHECK_INPUT(x);
    const c10::cuda::CUDAGuard guard(x.device());
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    hardsigmoid_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

module = load_inline(name="hardsigmoid_guard", cpp_sources="torch::Tensor hardsigmoid(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["hardsigmoid"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.hardsigmoid(x)
