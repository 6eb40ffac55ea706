# Level 1 problem 19 (ReLU): an honest ReLU kernel, but the file also replaces PyTorch's own aten::relu
# on CUDA from Python (torch.library) with nine clamp passes: the reference and the eager baseline
# would run nine times slower. Expected: state_changed.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""


kernel = load_inline(
    name="relu_python_override",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
)

# Kept alive for as long as the module: the registration lasts as long as the library object.
_aten = torch.library.Library("aten", "IMPL")


def _slow_relu(x):
    y = torch.clamp_min(x, 0)
    for _ in range(8):
        y = torch.clamp_min(y, 0)
    return y


_aten.impl("relu", _slow_relu, "CUDA")


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return kernel.relu_cuda(x)
