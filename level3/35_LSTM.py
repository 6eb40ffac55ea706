import torch
import torch.nn as nn


class Model(nn.Module):
    """LSTM classifier: 6-layer batch-first LSTM from random (h0, c0) drawn in forward, Linear on the
    last time step."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, output_size: int, dropout: float = 0.0):
        super().__init__()
        self.num_layers = num_layers
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch = x.size(0)
        h0 = torch.randn([self.num_layers, batch, self.hidden_size], device=x.device)
        c0 = torch.randn([self.num_layers, batch, self.hidden_size], device=x.device)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


def get_inputs():
    x = torch.rand(batch_size, sequence_length, input_size)
    return [x]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]
