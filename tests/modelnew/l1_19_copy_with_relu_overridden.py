# Level 1 problem 19 (ReLU): a copy kernel, which is wrong for ReLU, made to look right by replacing
# PyTorch's aten::relu on CUDA with a copy too: the reference would then compute what the kernel does.
# Expected: state_changed (a copy for ReLU is fragile or value_mismatch otherwise).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void copy_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = x[i];  // a copy, not a ReLU
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    copy_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""


kernel = load_inline(
    name="copy_with_relu_override",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
)

# Kept alive for as long as the module: the registration lasts as long as the library object.
_aten = torch.library.Library("aten", "IMPL")
_aten.impl("relu", lambda x: x.clone(), "CUDA")


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return kernel.relu_cuda(x)
