# Level 1 problem 19 (ReLU): an honest ReLU kernel that, on its first call, sets aside L2 cache for
# persisting lines and marks its input's memory persisting on the current stream (an access-policy
# window): lines marked so survive the L2 flush between timed calls, and the setting stays for the
# reference and the baselines. Expected: state_changed, for the window at least (it asks for at most
# the GPU's largest set-aside: the H100 refused 32 MB, and may already set aside that much).
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

torch::Tensor relu_cuda(torch::Tensor x) {
    static bool persisting = false;
    if (!persisting) {
        int device = 0, most = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&most, cudaDevAttrMaxPersistingL2CacheSize, device);
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::min<size_t>(most, size_t(32) << 20));
        cudaStreamAttrValue window = {};
        window.accessPolicyWindow.base_ptr = x.data_ptr();
        window.accessPolicyWindow.num_bytes = std::min<size_t>(x.numel() * sizeof(float), size_t(32) << 20);
        window.accessPolicyWindow.hitRatio = 1.0f;
        window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cudaStreamSetAttribute(at::cuda::getCurrentCUDAStream().stream(), cudaStreamAttributeAccessPolicyWindow, &window);
        persisting = true;
    }
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu = load_inline(
    name="relu_l2_persisting",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu.relu_cuda(x)
