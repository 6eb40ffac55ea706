# Level 3 problem 3 (deep narrow MLP: 16 x (Linear 1024 + ReLU), then Linear 8192) in KernelBench's
# format, without a graph: each layer is torch.mm(h, W.t()) (cuBLAS) followed by the extension's own
# kernel that adds the bias and applies the ReLU (the bias only, for the last layer), both on the
# current stream. The twin of l3_3_cuda_graph.py (the same kernels, replayed from a CUDA graph there),
# for comparing speedups. Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

bias_act_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// y = y + bias[col], then max(., 0) when relu, in place over (rows, cols).
__global__ void bias_act_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t rows, int64_t cols,
                                bool relu) {
    const int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = y[i] + bias[i % cols];
        y[i] = relu ? fmaxf(v, 0.0f) : v;
    }
}

torch::Tensor bias_act_(torch::Tensor y, torch::Tensor bias, bool relu) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.dim() == 2 && y.scalar_type() == torch::kFloat32,
                "y must be a contiguous 2-D float32 CUDA tensor");
    TORCH_CHECK(bias.is_contiguous() && bias.numel() == y.size(1), "bias must have y.size(1) elements");
    const int64_t rows = y.size(0), cols = y.size(1);
    const int threads = 256;
    const int blocks = (int)std::max<int64_t>(1, std::min<int64_t>((rows * cols + threads - 1) / threads, 132 * 32));
    bias_act_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream().stream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), rows, cols, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

bias_act = load_inline(
    name="mlp_bias_act_ungraphed",
    cpp_sources="torch::Tensor bias_act_(torch::Tensor y, torch::Tensor bias, bool relu);",
    cuda_sources=bias_act_source,
    functions=["bias_act_"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers.append(nn.Linear(current, size))
            layers.append(nn.ReLU())
            current = size
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        h = x.contiguous()
        for i, linear in enumerate(linears):
            h = bias_act.bias_act_(torch.mm(h, linear.weight.t()), linear.bias, i + 1 < len(linears))
        return h
