# For the tests that run without a GPU (tests/compile/modelnew_test.cpp): a ModelNew whose C++
# extension starts native threads of its own. Mode 0 computes torch::relu on a std::thread and joins
# it before returning: the op counts as forward's. Mode 1 leaves a thread running after the call
# returns (it sleeps, then ends): kbench refuses that.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = """
#include <chrono>
#include <thread>

torch::Tensor relu_on_thread(torch::Tensor x) {
    torch::Tensor y;
    std::thread worker([&] { y = torch::relu(x); });
    worker.join();
    return y;
}

torch::Tensor relu_then_leave_thread(torch::Tensor x) {
    std::thread([] { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }).detach();
    return x.clamp_min(0);
}
"""

threads = load_inline(name="native_threads_cpu", cpp_sources=source,
                      functions=["relu_on_thread", "relu_then_leave_thread"])


class ModelNew(nn.Module):
    def forward(self, x, mode=0):
        if mode == 1:
            return threads.relu_then_leave_thread(x)
        return threads.relu_on_thread(x)
