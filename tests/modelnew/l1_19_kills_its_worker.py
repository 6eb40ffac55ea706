# Level 1 problem 19 (ReLU): a ModelNew file that kills its own process with SIGKILL when it is
# imported, as the OOM killer or an operator would kill a worker from outside. Expected: crash (its
# worker dies on the retry too), never a second chance that a trainer could farm.
import os
import signal

import torch
import torch.nn as nn

os.kill(os.getpid(), signal.SIGKILL)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
