# Level 2 problem 18 (Linear, sum, max, mean, logsumexp, logsumexp over dim 1): the linear layer and the
# sum over its outputs are one kernel (sum_j (x W^T + b)_j = x . sum_j W_j + sum_j b_j, in double), and
# the max, mean and two logsumexps over the remaining size-1 dimension are left to PyTorch, as a model
# wrote it. The kernel does the work: expected correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per row of x: out[row] = x[row] . w_sum + b_sum.
__global__ void row_dot(const float* __restrict__ x, const float* __restrict__ w_sum, float b_sum,
                        float* __restrict__ out, int64_t features) {
    const float* row = x + blockIdx.x * features;
    double acc = 0.0;
    for (int64_t k = threadIdx.x; k < features; k += blockDim.x) acc += (double)row[k] * (double)w_sum[k];
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    __shared__ double warp_sums[32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += warp_sums[w];
        out[blockIdx.x] = (float)(total + (double)b_sum);
    }
}

torch::Tensor linear_sum_cuda(torch::Tensor x, torch::Tensor w_sum, double b_sum) {
    auto xc = x.contiguous();
    auto out = torch::empty({xc.size(0), 1}, xc.options());
    row_dot<<<(unsigned)xc.size(0), 256>>>(xc.data_ptr<float>(), w_sum.data_ptr<float>(), (float)b_sum,
                                           out.data_ptr<float>(), xc.size(1));
    return out;
}
"""

linear_sum = load_inline(
    name="linear_sum",
    cpp_sources="torch::Tensor linear_sum_cuda(torch::Tensor x, torch::Tensor w_sum, double b_sum);",
    cuda_sources=source,
    functions=["linear_sum_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w_sum = self.linear.weight.sum(dim=0).contiguous()
        x = linear_sum.linear_sum_cuda(x, w_sum, float(self.linear.bias.sum()))
        x = torch.max(x, dim=1, keepdim=True)[0]
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x
