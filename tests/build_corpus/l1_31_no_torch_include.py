# Build corpus: a CUDA source that includes no PyTorch header itself (load_inline adds
# <torch/types.h>), alpha from get_init_inputs() (ELU, L1#31).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void elu_kernel(const float* __restrict__ x, float* __restrict__ y, float alpha, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v > 0.0f ? v : alpha * expm1f(v);
    }
}

torch::Tensor elu(torch::Tensor x, double alpha) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    elu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)alpha, n);
    return y;
}
"""

module = load_inline(name="elu_plain", cpp_sources="torch::Tensor elu(torch::Tensor x, double alpha);",
                     cuda_sources=cuda_source, functions=["elu"])


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return module.elu(x, self.alpha)
