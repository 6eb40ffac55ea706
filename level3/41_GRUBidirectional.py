import torch
import torch.nn as nn


class Model(nn.Module):
    """6-layer bidirectional GRU (seq-first) from a given h0; returns the output sequence (seq, batch, 2*hidden)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0.0, bidirectional=True)
        # An initial state drawn at construction, as in the original (which keeps it as a plain attribute):
        # kept here as a non-persistent buffer with the same values. forward() uses the h0 it is given.
        self.register_buffer("h0", torch.randn((num_layers * 2, batch_size, hidden_size)), persistent=False)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, h_n = self.gru(x, h0)
        return output


batch_size = 10
seq_len = 512
input_size = 128
hidden_size = 256
num_layers = 6


def get_inputs():
    x = torch.rand(seq_len, batch_size, input_size)
    h0 = torch.rand(num_layers * 2, batch_size, hidden_size)
    return [x, h0]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]
