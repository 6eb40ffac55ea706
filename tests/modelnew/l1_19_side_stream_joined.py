# Level 1 problem 19 (ReLU) in KernelBench's format: the honest twin of l1_19_thread_keeps_spin_work.py.
# The kernel's work is split: the first 1/8 of the elements on the current stream, the other 7/8 on a
# side stream made once (non-blocking). The side stream first waits on an event recorded on the current
# stream (the inputs are ready), and before relu_cuda returns the current stream waits on an event
# recorded on the side stream after its kernel (the work is joined): all of it is ordered before
# whatever the caller queues next on its stream, so timing the current stream times it all.
# Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

static void launch_relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
    if (n <= 0) return;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_kernel<<<blocks, threads, 0, stream>>>(x, y, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "x must be a contiguous float32 CUDA tensor");
    static cudaStream_t side = nullptr;
    static cudaEvent_t inputs_ready = nullptr, side_done = nullptr;
    if (side == nullptr) {
        C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        C10_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready, cudaEventDisableTiming));
        C10_CUDA_CHECK(cudaEventCreateWithFlags(&side_done, cudaEventDisableTiming));
    }
    const cudaStream_t current = at::cuda::getCurrentCUDAStream().stream();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int64_t head = n / 8;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    // The side stream starts once the current stream's work so far (the inputs) is done.
    C10_CUDA_CHECK(cudaEventRecord(inputs_ready, current));
    C10_CUDA_CHECK(cudaStreamWaitEvent(side, inputs_ready, 0));
    launch_relu(xp + head, yp + head, n - head, side);
    C10_CUDA_CHECK(cudaEventRecord(side_done, side));

    launch_relu(xp, yp, head, current);

    // Joined: the current stream goes on only after the side stream's kernel.
    C10_CUDA_CHECK(cudaStreamWaitEvent(current, side_done, 0));
    return y;
}
"""

relu = load_inline(
    name="relu_side_stream_joined",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu.relu_cuda(x)
