# Level 1 problem 19 (ReLU): a ModelNew file that kills its own process with SIGKILL when it is
# imported, as the OOM killer or an operator would kill a worker from outside (kbench refuses os.kill,
# but a process can always signal itself: here raise_signal, elsewhere native code). Expected: crash
# (its worker dies on the retry too), never a second chance that a trainer could farm.
import signal

import torch
import torch.nn as nn

signal.raise_signal(signal.SIGKILL)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
