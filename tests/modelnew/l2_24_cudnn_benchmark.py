# Level 2 problem 24 (Conv3d, min over depth, softmax over channels) in KernelBench's format: the
# convolution is PyTorch's (cuDNN), the min over dim 2 and the softmax over the channels one kernel of
# the extension's, reading the convolution's output once. __init__ sets torch.backends.cudnn.benchmark
# = True (cuDNN times its algorithms and keeps the fastest): a setting that changes speed, not
# precision. Expected: correct. Its twin l2_24_allows_tf32.py sets the TF32 flag instead.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

min_softmax_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

// y: (N, C, D, H, W) contiguous; out: (N, C, H, W) = softmax over C of min over D of y.
// One thread per (n, h, w) position; threads of a warp read neighbouring w, so reads coalesce.
__global__ void min_softmax_kernel(const float* __restrict__ y, float* __restrict__ out, int64_t batch,
                                   int64_t channels, int64_t depth, int64_t hw) {
    const int64_t positions = batch * hw;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < positions;
         p += (int64_t)gridDim.x * blockDim.x) {
        const int64_t n = p / hw, s = p % hw;
        const float* src = y + n * channels * depth * hw + s;
        float* dst = out + n * channels * hw + s;
        float top = -INFINITY;
        for (int64_t c = 0; c < channels; ++c) {
            const float* col = src + c * depth * hw;
            float m = col[0];
            for (int64_t d = 1; d < depth; ++d) m = fminf(m, col[d * hw]);
            dst[c * hw] = m;
            top = fmaxf(top, m);
        }
        float sum = 0.0f;
        for (int64_t c = 0; c < channels; ++c) {
            const float e = expf(dst[c * hw] - top);
            dst[c * hw] = e;
            sum += e;
        }
        const float inv = 1.0f / sum;
        for (int64_t c = 0; c < channels; ++c) dst[c * hw] *= inv;
    }
}

torch::Tensor min_softmax(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.dim() == 5 && y.scalar_type() == torch::kFloat32, "y must be a 5-D float32 CUDA tensor");
    y = y.contiguous();
    const int64_t batch = y.size(0), channels = y.size(1), depth = y.size(2), hw = y.size(3) * y.size(4);
    TORCH_CHECK(depth > 0 && channels > 0, "empty depth or channels");
    auto out = torch::empty({batch, channels, y.size(3), y.size(4)}, y.options());
    const int64_t positions = batch * hw;
    if (positions == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((positions + threads - 1) / threads, 132 * 32);
    min_softmax_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream().stream()>>>(
        y.data_ptr<float>(), out.data_ptr<float>(), batch, channels, depth, hw);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

min_softmax = load_inline(
    name="min_softmax_cudnn_benchmark",
    cpp_sources="torch::Tensor min_softmax(torch::Tensor y);",
    cuda_sources=min_softmax_source,
    functions=["min_softmax"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dim):
        super().__init__()
        torch.backends.cudnn.benchmark = True
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        assert dim == 2, "the kernel takes the min over the depth dimension (2)"
        self.dim = dim

    def forward(self, x):
        return min_softmax.min_softmax(self.conv(x))
