# Build corpus: with_cuda=True on a C++-only extension (CUDA headers and libraries, no .cu file): the
# C++ calls PyTorch's own sigmoid.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>

torch::Tensor sigmoid_via_aten(torch::Tensor x) {
    return torch::sigmoid(x);
}
"""

module = load_inline(name="sigmoid_aten", cpp_sources=cpp_source, functions=["sigmoid_via_aten"], with_cuda=True)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.sigmoid_via_aten(x)
