# Level 1 problem 1 (4096 x 4096 matrix product): the product is PyTorch's (at::matmul, cuBLAS),
# computed on a native std::thread that the extension starts and joins within the call (the thread's
# current CUDA stream is set to the caller's with a CUDAStreamGuard); then the extension's own kernel
# only copies that product into a fresh output. Its only kernel does none of the problem's work: the
# ablation run, with the submission's kernels skipped, still gets the product right. Expected:
# no_custom_kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <exception>
#include <thread>

__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
                "a and b must be 2-D CUDA tensors with matching inner sizes");
    const at::cuda::CUDAStream caller = at::cuda::getCurrentCUDAStream();
    torch::Tensor product;
    std::exception_ptr failure;
    std::thread worker([&] {
        try {
            at::cuda::CUDAStreamGuard guard(caller);
            product = at::matmul(a, b).contiguous();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    worker.join();
    if (failure) std::rethrow_exception(failure);

    auto out = torch::empty_like(product);
    const int64_t n = product.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    copy_kernel<<<blocks, threads, 0, caller.stream()>>>(product.data_ptr<float>(), out.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

matmul = load_inline(
    name="matmul_on_thread_then_copy",
    cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
    cuda_sources=source,
    functions=["matmul_cuda"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul.matmul_cuda(a, b)
