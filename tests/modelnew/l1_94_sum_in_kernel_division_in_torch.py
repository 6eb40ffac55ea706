# Level 1 problem 94 (MSE loss): one kernel sums the squared differences (in double, one atomic add
# per block), and the division by n is a tensor op. The kernel computes the answer and PyTorch only
# finishes it, as many model outputs do: expected correct (no_custom_kernel under --torch-ops forbid).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void squared_difference_sum(const float* __restrict__ p, const float* __restrict__ t, double* __restrict__ out,
                                       int64_t n) {
    double acc = 0.0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const double d = (double)p[i] - (double)t[i];
        acc += d * d;
    }
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    __shared__ double warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        double block = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) block += warp_sums[w];
        atomicAdd(out, block);
    }
}

torch::Tensor squared_difference_sum_cuda(torch::Tensor p, torch::Tensor t) {
    auto pc = p.contiguous();
    auto tc = t.contiguous();
    auto out = torch::zeros({}, p.options().dtype(torch::kFloat64));
    const int64_t n = pc.numel();
    squared_difference_sum<<<132 * 8, 256>>>(pc.data_ptr<float>(), tc.data_ptr<float>(), out.data_ptr<double>(), n);
    return out;
}
"""

mse = load_inline(
    name="squared_difference_sum",
    cpp_sources="torch::Tensor squared_difference_sum_cuda(torch::Tensor p, torch::Tensor t);",
    cuda_sources=source,
    functions=["squared_difference_sum_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        total = mse.squared_difference_sum_cuda(predictions, targets)
        return (total / predictions.numel()).float()
