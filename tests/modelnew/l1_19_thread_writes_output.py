# Level 1 problem 19 (ReLU): a ModelNew that starts a thread to write the answer into its output after
# forward has returned, while the harness compares. Expected: host_error: a submission starts no
# threads.
import threading

import torch
import torch.nn as nn

pending = []


def finish_outputs():
    while True:
        while pending:
            x, y = pending.pop()
            y.copy_(torch.relu(x))


threading.Thread(target=finish_outputs, daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        pending.append((x, y))
        return y
