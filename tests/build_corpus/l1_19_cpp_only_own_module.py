# Build corpus: a C++-only extension with its own PYBIND11_MODULE (no `functions`), a keyword
# argument with a default, and extra_cflags=["-O2"].
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
#include <torch/extension.h>

torch::Tensor relu_or_leaky(torch::Tensor x, double slope) {
    return slope == 0.0 ? torch::relu(x) : torch::leaky_relu(x, slope);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("relu_or_leaky", &relu_or_leaky, "ReLU, or LeakyReLU with a slope", pybind11::arg("x"),
          pybind11::arg("slope") = 0.0);
}
"""

module = load_inline(name="relu_own_module", cpp_sources=cpp_source, extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.relu_or_leaky(x)
