# Level 3 problem 3 (deep narrow MLP: 16 x (Linear 1024 + ReLU), then Linear 8192) in KernelBench's
# format, replayed from an honest CUDA graph. Each layer is torch.mm(h, W.t()) (cuBLAS) followed by the
# extension's own kernel that adds the bias and applies the ReLU (the bias only, for the last layer),
# both on the current stream. At the first call (and when the input's shape changes) forward allocates
# a static input buffer, warms up 3 iterations on a side stream as PyTorch's CUDA-graph docs require,
# then captures the whole MLP with torch.cuda.graph. Every call copies x into the static buffer,
# replays the graph and returns a clone of the static output. Expected: correct. Its twin is
# l3_3_ungraphed.py, the same work without a graph, for comparing speedups.
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
    // The current stream: during capture, the capture stream.
    bias_act_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream().stream()>>>(
        y.data_ptr<float>(), bias.data_ptr<float>(), rows, cols, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

bias_act = load_inline(
    name="mlp_bias_act_graph",
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
        self.graph = None
        self.graph_key = None
        self.static_x = None
        self.static_out = None

    def mlp(self, h):
        linears = [m for m in self.network if isinstance(m, nn.Linear)]
        for i, linear in enumerate(linears):
            h = bias_act.bias_act_(torch.mm(h, linear.weight.t()), linear.bias, i + 1 < len(linears))
        return h

    def capture(self, x):
        self.graph = None
        self.static_x = torch.empty_like(x, memory_format=torch.contiguous_format)
        self.static_x.copy_(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.mlp(self.static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.static_out = self.mlp(self.static_x)
        self.graph = graph
        self.graph_key = (tuple(x.shape), x.dtype, x.device)

    def forward(self, x):
        with torch.no_grad():
            if self.graph is None or self.graph_key != (tuple(x.shape), x.dtype, x.device):
                self.capture(x)
            self.static_x.copy_(x)
            self.graph.replay()
            return self.static_out.clone()
