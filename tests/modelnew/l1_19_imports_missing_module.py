# Level 1 problem 19 (ReLU): a file that imports a module that is not installed. Expected: host_error.
import torch
import torch.nn as nn
import kbench_no_such_module  # noqa: F401


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
