# For the tests that run without a GPU: load_inline asked to bind a function the C++ source only
# declares. Expected: compile_error, with the compiler's or the loader's message.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu = load_inline(name="relu_cpu_missing", cpp_sources="torch::Tensor relu_cpu(torch::Tensor x);",
                   functions=["relu_cpu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return relu.relu_cpu(x)
