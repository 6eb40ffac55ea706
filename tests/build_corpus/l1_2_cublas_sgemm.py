# Build corpus: cuBLAS called from the extension (<cublas_v2.h>, extra_ldflags=["-lcublas"]), on
# PyTorch's current stream (Standard matrix multiplication, L1#2).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>

torch::Tensor sgemm(torch::Tensor a, torch::Tensor b) {
    static cublasHandle_t handle = [] {
        cublasHandle_t h;
        TORCH_CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate failed");
        return h;
    }();
    const int m = a.size(0), k = a.size(1), n = b.size(1);
    auto c = torch::empty({m, n}, a.options());
    cublasSetStream(handle, at::cuda::getCurrentCUDAStream());
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    TORCH_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.data_ptr<float>(), n,
                            a.data_ptr<float>(), k, &zero, c.data_ptr<float>(), n) == CUBLAS_STATUS_SUCCESS,
                "cublasSgemm failed");
    return c;
}
"""

module = load_inline(name="sgemm_cublas", cpp_sources="torch::Tensor sgemm(torch::Tensor a, torch::Tensor b);",
                     cuda_sources=cuda_source, functions=["sgemm"], extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def forward(self, a, b):
        return module.sgemm(a.contiguous(), b.contiguous())
