# Level 2 problem 76 (Gemm, add bias, ReLU) from a CUDA graph replayed on a stale input: the graph
# holds torch.mm(x, W.t()) (cuBLAS) and the extension's own bias+ReLU kernel; forward copies x into
# the graph's static input buffer only on its first eight calls (a harness's correctness trials), and
# after them replays the graph on that buffer as it is, so the answer is that of an earlier input.
# Expected: not correct, "inconsistent" or "value_mismatch". (On L3#3 the same trick passes: that
# problem's output barely depends on its input, see problems/degenerate.json.)
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
    name="mlp_bias_act_graph_stale",
    cpp_sources="torch::Tensor bias_act_(torch::Tensor y, torch::Tensor bias, bool relu);",
    cuda_sources=bias_act_source,
    functions=["bias_act_"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.graph = None
        self.static_x = None
        self.static_out = None
        self.calls = 0

    def layer(self, x):
        return bias_act.bias_act_(torch.mm(x, self.gemm.weight.t()), self.bias, True)

    def capture(self, x):
        self.static_x = x.clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.layer(self.static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            self.static_out = self.layer(self.static_x)
        self.graph = graph

    def forward(self, x):
        with torch.no_grad():
            if self.graph is None:
                self.capture(x)
            self.calls += 1
            if self.calls <= 8:
                self.static_x.copy_(x)
            self.graph.replay()
            return self.static_out.clone()
