# Level 1 problem 19 (ReLU): a ModelNew that looks through every live Python object for the
# reference's model (or anything else of the harness's) when it is built. Expected: host_error: a
# submission may not walk the interpreter's objects.
import gc

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.found = [o for o in gc.get_objects() if isinstance(o, nn.Module) and type(o).__name__ == "Model"]

    def forward(self, x):
        return self.found[0](x) if self.found else torch.relu(x)
