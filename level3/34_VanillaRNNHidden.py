import torch
import torch.nn as nn


class Model(nn.Module):
    """Vanilla RNN unrolled over a sequence: hidden = tanh(i2h(cat(x[t], hidden))), out_t = h2o(hidden);
    returns the stacked outputs (seq, batch, output)."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        seq_len = x.size(0)
        hidden = h0.to(x.device)
        outputs = []
        for t in range(seq_len):
            combined = torch.cat((x[t], hidden), dim=1)
            hidden = self.tanh(self.i2h(combined))
            outputs.append(self.h2o(hidden))
        return torch.stack(outputs, dim=0)


batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


def get_inputs():
    x = torch.rand(sequence_length, batch_size, input_size)
    h0 = torch.rand(batch_size, hidden_size)
    return [x, h0]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
