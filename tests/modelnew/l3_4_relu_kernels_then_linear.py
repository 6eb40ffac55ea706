# Level 3 problem 4 (LeNet-5) as partial solutions usually are: PyTorch's convolutions, pools and
# linear layers, the extension's kernel for the four ReLUs, and the last layer (fc3) a plain F.linear.
# The kernels are needed (skipped, every later layer reads poison): expected correct.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(y[i], 0.0f);
    }
}

torch::Tensor relu_(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous(), "y must be a contiguous CUDA tensor");
    const int64_t n = y.numel();
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 132 * 32);
    relu_kernel<<<blocks, threads>>>(y.data_ptr<float>(), n);
    return y;
}
"""

kernels = load_inline(
    name="lenet_relu",
    cpp_sources="torch::Tensor relu_(torch::Tensor y);",
    cuda_sources=source,
    functions=["relu_"],
)


class ModelNew(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=6, kernel_size=5, stride=1)
        self.conv2 = nn.Conv2d(in_channels=6, out_channels=16, kernel_size=5, stride=1)
        self.fc1 = nn.Linear(in_features=16 * 5 * 5, out_features=120)
        self.fc2 = nn.Linear(in_features=120, out_features=84)
        self.fc3 = nn.Linear(in_features=84, out_features=num_classes)

    def forward(self, x):
        x = kernels.relu_(self.conv1(x).contiguous())
        x = F.max_pool2d(x, kernel_size=2, stride=2)
        x = kernels.relu_(self.conv2(x).contiguous())
        x = F.max_pool2d(x, kernel_size=2, stride=2)
        x = x.reshape(-1, 16 * 5 * 5)
        x = kernels.relu_(self.fc1(x).contiguous())
        x = kernels.relu_(self.fc2(x).contiguous())
        return F.linear(x, self.fc3.weight, self.fc3.bias)
