# Build corpus: a LayerNorm with the module's own weight and bias (nn.LayerNorm's parameters, built
# as the reference's), Welford's mean and variance per sample, with_pytorch_error_handling=False.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>

__global__ void layer_norm_rows(const float* __restrict__ x, const float* __restrict__ weight,
                                const float* __restrict__ bias, float* __restrict__ y, int64_t cols, float eps) {
    __shared__ float shared_mean[1024], shared_m2[1024], shared_count[1024];
    const float* row = x + blockIdx.x * cols;
    float mean = 0.0f, m2 = 0.0f, count = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        count += 1.0f;
        const float d = row[j] - mean;
        mean += d / count;
        m2 += d * (row[j] - mean);
    }
    shared_mean[threadIdx.x] = mean, shared_m2[threadIdx.x] = m2, shared_count[threadIdx.x] = count;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            const float na = shared_count[threadIdx.x], nb = shared_count[threadIdx.x + stride], n = na + nb;
            if (n > 0.0f) {
                const float d = shared_mean[threadIdx.x + stride] - shared_mean[threadIdx.x];
                shared_mean[threadIdx.x] += d * nb / n;
                shared_m2[threadIdx.x] += shared_m2[threadIdx.x + stride] + d * d * na * nb / n;
                shared_count[threadIdx.x] = n;
            }
        }
        __syncthreads();
    }
    const float mu = shared_mean[0], inv_std = rsqrtf(shared_m2[0] / cols + eps);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        y[blockIdx.x * cols + j] = (row[j] - mu) * inv_std * weight[j] + bias[j];
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    const int64_t cols = weight.numel(), rows = x.numel() / cols;
    auto y = torch::empty_like(x);
    layer_norm_rows<<<rows, 1024>>>(x.contiguous().data_ptr<float>(), weight.contiguous().data_ptr<float>(),
                                    bias.contiguous().data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    return y;
}
"""

module = load_inline(name="layer_norm_welford",
                     cpp_sources="torch::Tensor layer_norm(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);",
                     cuda_sources=cuda_source, functions=["layer_norm"], with_pytorch_error_handling=False)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return module.layer_norm(x, self.ln.weight, self.ln.bias, self.ln.eps)
