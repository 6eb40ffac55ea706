# Build corpus: a C++-only extension (no CUDA source): the ReLU is PyTorch's own clamp, called from
# C++ (it builds; kbench's verdict on it is no_custom_kernel).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor relu_via_clamp(const torch::Tensor& x) {
    return torch::clamp_min(x, 0.0);
}
"""

module = load_inline(name="relu_cpp_only", cpp_sources=cpp_source, functions=["relu_via_clamp"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.relu_via_clamp(x)
