# Level 1 problem 19 (ReLU): a ModelNew file that runs a command when it is imported (here only
# `nvidia-smi`; it could be anything). Expected: host_error: a submission starts no processes.
import subprocess

import torch
import torch.nn as nn

subprocess.run(["nvidia-smi"], check=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
