# For the tests that run without a GPU (Debian's PyTorch is CPU-only, so no CUDA extension builds
# there): a ModelNew whose extension is C++ alone, a ReLU on the CPU, and whose forward returns what
# it is asked to (tests/compile/modelnew_test.cpp): the ReLU (mode 0), a tuple (1), a tensor
# subclass (2).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
torch::Tensor relu_cpu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

relu = load_inline(name="relu_cpu", cpp_sources=source, functions=["relu_cpu"])


class Subclass(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(4))
        self.calls = 0

    def forward(self, x, mode=0):
        self.calls += 1
        if mode == 1:
            return relu.relu_cpu(x), torch.neg(x)
        if mode == 2:
            return relu.relu_cpu(x).as_subclass(Subclass)
        return relu.relu_cpu(x)
