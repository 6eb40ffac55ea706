# For tests/compile/modelnew_test.cpp, with level 3 problem 46 (NetVLAD) as the reference: a ModelNew
# that imports nothing and uses what the reference's file imports (torch, nn, math) and its
# constants (feature_size), as KernelBench's shared namespace allows. forward returns the number of
# the reference's own definitions it can see (none: Model, get_inputs, get_init_inputs stay hidden)
# and a value computed with math.


class ModelNew(nn.Module):  # noqa: F821 (nn, torch, math: imported by the reference)
    def __init__(self, cluster_size, feature_size_given, ghost_clusters):
        super().__init__()
        self.init_sc = 1 / math.sqrt(feature_size)  # noqa: F821

    def forward(self, x):
        seen = [name for name in ("Model", "get_inputs", "get_init_inputs") if name in globals()]
        return torch.tensor([float(len(seen)), self.init_sc])  # noqa: F821
