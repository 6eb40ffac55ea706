# Level 1 problem 19 (ReLU): a file whose class has another name. Expected: host_error.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
