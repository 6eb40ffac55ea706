# Level 1 problem 19 (ReLU): a ModelNew that inherits the reference's forward. KernelBench's
# evaluation runs a submission in the namespace where it defined the reference, so there `Model` is
# found; kbench gives a submission the reference's imports and constants, never its Model. Expected:
# host_error.
import torch
import torch.nn as nn


class ModelNew(Model):  # noqa: F821 (the reference's class)
    pass
