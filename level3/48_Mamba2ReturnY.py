import torch
import torch.nn as nn
import torch.nn.functional as F
from typing import Optional


class Model(nn.Module):
    """Mamba-2 SSD, minimal chunked discrete form; A, B, C are (random) parameters, X is the input;
    returns Y (batch, seq, heads, d_head)."""

    def __init__(self, batch_size: int = 2048, seq_length: int = 128, n_heads: int = 8, d_head: int = 64,
                 d_state: int = 16, block_len: int = 64):
        super().__init__()
        assert seq_length % block_len == 0, "Sequence length must be divisible by block length"
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.n_heads = n_heads
        self.d_head = d_head
        self.d_state = d_state
        self.block_len = block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def segsum(self, x: torch.Tensor) -> torch.Tensor:
        """S[..., i, j] = cumsum(x)[i] - cumsum(x)[j] for j <= i, -inf above the diagonal."""
        T = x.size(-1)
        x_cumsum = torch.cumsum(x, dim=-1)
        x_segsum = x_cumsum.unsqueeze(-1) - x_cumsum.unsqueeze(-2)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=0)
        return x_segsum.masked_fill(~mask, float("-inf"))

    def forward(self, X: torch.Tensor, initial_states: Optional[torch.Tensor] = None) -> torch.Tensor:
        b = X.size(0)
        h = X.size(2)
        p = X.size(3)
        l = self.block_len
        c = X.size(1) // l
        n = self.d_state
        # split the sequence into chunks: "b (c l) ... -> b c l ..."
        X_blocks = X.reshape(b, c, l, h, p)
        A_blocks = self.A.reshape(b, c, l, h)
        B_blocks = self.B.reshape(b, c, l, h, n)
        C_blocks = self.C.reshape(b, c, l, h, n)

        A_blocks = A_blocks.permute(0, 3, 1, 2)  # b h c l
        A_cumsum = torch.cumsum(A_blocks, dim=-1)

        # 1. diagonal (intra-chunk) outputs
        L = torch.exp(self.segsum(A_blocks))
        Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", [C_blocks, B_blocks, L, X_blocks])

        # 2. states at the end of each chunk
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", [B_blocks, decay_states, X_blocks])

        # 3. inter-chunk recurrence
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(A_cumsum[:, :, :, -1], [1, 0])))
        new_states = torch.einsum("bhzc,bchpn->bzhpn", [decay_chunk, states])
        states = new_states[:, :-1]

        # 4. state -> output conversion
        state_decay_out = torch.exp(A_cumsum)
        Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", [C_blocks, states, state_decay_out])

        # merge the chunks back into the sequence
        Y = (Y_diag + Y_off).reshape(b, c * l, h, p)
        return Y


batch_size = 2048
seq_length = 128
n_heads = 8
d_head = 64
d_state = 16
block_len = 64


def get_inputs():
    X = torch.rand(batch_size, seq_length, n_heads, d_head)
    return [X]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]
