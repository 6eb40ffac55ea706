# Level 1 problem 19 (ReLU): the exploit that hid side-stream work from kbench's timer. The ReLU is
# split as in l1_19_side_stream_joined.py (1/8 on the current stream, 7/8 on a non-blocking side stream
# that waits for the inputs), but the side stream is never joined back into the current stream. And at
# its first call the extension starts a detached native std::thread that runs forever, keeping about
# 8 ms of spin kernels (one block each, busy-waiting ~1 ms on %globaltimer) queued on its own
# non-blocking stream: it records an event after each and polls them with cudaEventQuery every
# ~200 us, topping the queue back up to 8 in flight. Expected: host_error, message "native thread":
# kbench refuses a submission whose native thread outlives the call that started it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <chrono>
#include <thread>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One block that does nothing but wait for `ns` nanoseconds of wall time.
__global__ void spin_kernel(unsigned long long ns) {
    const unsigned long long start = global_ns();
    while (global_ns() - start < ns) {
    }
}

static void launch_relu(const float* x, float* y, int64_t n, cudaStream_t stream) {
    if (n <= 0) return;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_kernel<<<blocks, threads, 0, stream>>>(x, y, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Runs forever: keeps up to kInFlight spin kernels of ~1 ms queued on its own stream.
static void keep_spinning(int device) {
    constexpr int kInFlight = 8;
    constexpr unsigned long long kSpinNs = 1000000ull;
    cudaSetDevice(device);
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEvent_t done[kInFlight];
    bool queued[kInFlight] = {};
    for (int i = 0; i < kInFlight; ++i) cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming);
    for (;;) {
        for (int i = 0; i < kInFlight; ++i) {
            if (queued[i] && cudaEventQuery(done[i]) == cudaErrorNotReady) continue;
            spin_kernel<<<1, 32, 0, stream>>>(kSpinNs);
            cudaEventRecord(done[i], stream);
            queued[i] = true;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "x must be a contiguous float32 CUDA tensor");
    static cudaStream_t side = nullptr;
    static cudaEvent_t inputs_ready = nullptr;
    if (side == nullptr) {
        C10_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        C10_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready, cudaEventDisableTiming));
        int device = 0;
        C10_CUDA_CHECK(cudaGetDevice(&device));
        std::thread(keep_spinning, device).detach();
    }
    const cudaStream_t current = at::cuda::getCurrentCUDAStream().stream();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int64_t head = n / 8;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();

    C10_CUDA_CHECK(cudaEventRecord(inputs_ready, current));
    C10_CUDA_CHECK(cudaStreamWaitEvent(side, inputs_ready, 0));
    launch_relu(xp + head, yp + head, n - head, side);

    launch_relu(xp, yp, head, current);
    // Not joined: nothing on the current stream waits for the side stream's 7/8.
    return y;
}
"""

relu = load_inline(
    name="relu_thread_keeps_spin_work",
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
