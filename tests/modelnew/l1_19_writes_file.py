# Level 1 problem 19 (ReLU): a ModelNew file that writes a file when it is imported (a cache of its
# own, or something left for later processes). Expected: host_error: a submission writes no files.
import torch
import torch.nn as nn

with open("/tmp/kbench-modelnew-was-here", "w") as f:
    f.write("hello\n")


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
