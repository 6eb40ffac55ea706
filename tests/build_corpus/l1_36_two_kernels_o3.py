# Build corpus: two kernels and extra_cuda_cflags=["-O3"] (RMSNorm over the feature dimension of
# an NCHW tensor, L1#36): the mean of squares per (batch, position), then the division.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void inverse_rms(const float* __restrict__ x, float* __restrict__ inv, int64_t batch, int64_t features,
                            int64_t positions, float eps) {
    const int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (p >= batch * positions) return;
    const int64_t b = p / positions, q = p % positions;
    const float* base = x + b * features * positions + q;
    float sum = 0.0f;
    for (int64_t f = 0; f < features; ++f) sum += base[f * positions] * base[f * positions];
    inv[p] = rsqrtf(sum / features + eps);
}

__global__ void scale_by(const float* __restrict__ x, const float* __restrict__ inv, float* __restrict__ y,
                         int64_t features, int64_t positions, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int64_t q = i % positions, b = i / (features * positions);
    y[i] = x[i] * inv[b * positions + q];
}

torch::Tensor rms_norm(torch::Tensor x, double eps) {
    const int64_t batch = x.size(0), features = x.size(1), positions = x.numel() / (batch * features);
    auto inv = torch::empty({batch * positions}, x.options());
    auto y = torch::empty_like(x);
    inverse_rms<<<(batch * positions + 255) / 256, 256>>>(x.data_ptr<float>(), inv.data_ptr<float>(), batch, features,
                                                         positions, (float)eps);
    const int64_t n = x.numel();
    scale_by<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), inv.data_ptr<float>(), y.data_ptr<float>(), features,
                                       positions, n);
    return y;
}
"""

module = load_inline(name="rms_norm", cpp_sources="torch::Tensor rms_norm(torch::Tensor x, double eps);",
                     cuda_sources=cuda_source, functions=["rms_norm"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return module.rms_norm(x, self.eps)
