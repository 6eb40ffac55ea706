# Level 1 problem 19 (ReLU): a file that is not valid Python. Expected: host_error.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x)
        return torch.relu(x)
