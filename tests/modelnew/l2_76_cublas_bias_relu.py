# Level 2 problem 76 (Linear without bias, + bias, ReLU) in KernelBench's format: the matrix product
# x @ W^T is the extension's own cublasSgemm call (its own handle, on the current stream), written
# straight into the output; the extension's kernel then adds the bias and applies the ReLU in place.
# The kernel does part of the problem's work (the bias and the ReLU), so skipping it breaks the
# answer. Expected: correct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

// y = relu(y + bias[col]), in place over the (rows, cols) product.
__global__ void bias_relu_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t rows, int64_t cols) {
    const int64_t n = rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(y[i] + bias[i % cols], 0.0f);
    }
}

static cublasHandle_t own_handle() {
    static cublasHandle_t handle = nullptr;
    if (handle == nullptr) {
        TORCH_CHECK(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate failed");
    }
    return handle;
}

// x: (batch, in), weight: (out, in) as nn.Linear keeps it, bias: (out,). Returns relu(x @ weight^T + bias).
torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.is_contiguous() && weight.is_contiguous() && bias.is_contiguous(), "contiguous tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                    bias.scalar_type() == torch::kFloat32, "float32 tensors expected");
    TORCH_CHECK(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1) && bias.numel() == weight.size(0),
                "x (batch, in), weight (out, in), bias (out) expected");
    const int batch = (int)x.size(0), in = (int)x.size(1), out = (int)weight.size(0);
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    cublasHandle_t handle = own_handle();
    TORCH_CHECK(cublasSetStream(handle, stream) == CUBLAS_STATUS_SUCCESS, "cublasSetStream failed");

    auto y = torch::empty({batch, out}, x.options());
    const float one = 1.0f, zero = 0.0f;
    // Column-major: y^T (out x batch) = W (out x in) x^T (in x batch). Row-major W is column-major W^T
    // (in x out, ld in), hence OP_T; row-major x is column-major x^T (in x batch, ld in).
    TORCH_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, out, batch, in, &one, weight.data_ptr<float>(), in,
                            x.data_ptr<float>(), in, &zero, y.data_ptr<float>(), out) == CUBLAS_STATUS_SUCCESS,
                "cublasSgemm failed");

    const int64_t n = (int64_t)batch * out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    bias_relu_kernel<<<blocks, threads, 0, stream>>>(y.data_ptr<float>(), bias.data_ptr<float>(), batch, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

gemm_bias_relu = load_inline(
    name="cublas_bias_relu",
    cpp_sources="torch::Tensor gemm_bias_relu(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);",
    cuda_sources=source,
    functions=["gemm_bias_relu"],
    extra_cuda_cflags=["-O3"],
    extra_ldflags=["-lcublas"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return gemm_bias_relu.gemm_bias_relu(x.contiguous(), self.gemm.weight, self.bias)
