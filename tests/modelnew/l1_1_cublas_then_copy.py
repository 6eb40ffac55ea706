# Level 1 problem 1 (4096 x 4096 matrix product): the extension makes its own cuBLAS handle (once),
# sets it to the current stream and calls cublasSgemm for the product (row-major operands as the
# column-major product C^T = B^T A^T) into a temporary tensor; its own kernel only copies that into the
# output. All of the problem's work is cuBLAS's, none of it the submission's kernel's: the ablation
# run, with the submission's kernels skipped, still gets the product right. Expected:
# no_custom_kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

static cublasHandle_t own_handle() {
    static cublasHandle_t handle = nullptr;
    if (handle == nullptr) {
        TORCH_CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate failed");
    }
    return handle;
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.is_contiguous() && b.is_contiguous(),
                "a and b must be contiguous CUDA tensors");
    TORCH_CHECK(a.scalar_type() == torch::kFloat32 && b.scalar_type() == torch::kFloat32, "a and b must be float32");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "a (m, k) and b (k, n) expected");
    const int m = (int)a.size(0), k = (int)a.size(1), n = (int)b.size(1);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    cublasHandle_t handle = own_handle();
    TORCH_CHECK(cublasSetStream(handle, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream failed");

    auto product = torch::empty({m, n}, a.options());
    const float one = 1.0f, zero = 0.0f;
    // Row-major C (m x n) = A B is column-major C^T (n x m) = B^T (n x k) A^T (k x m).
    TORCH_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.data_ptr<float>(), n,
                            a.data_ptr<float>(), k, &zero, product.data_ptr<float>(), n) == CUBLAS_STATUS_SUCCESS,
                "cublasSgemm failed");

    auto out = torch::empty_like(product);
    const int64_t total = product.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 132 * 32);
    copy_kernel<<<blocks, threads, 0, stream>>>(product.data_ptr<float>(), out.data_ptr<float>(), total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

matmul = load_inline(
    name="cublas_then_copy",
    cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
    cuda_sources=source,
    functions=["matmul_cuda"],
    extra_cuda_cflags=["-O3"],
    extra_ldflags=["-lcublas"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return matmul.matmul_cuda(a, b)
