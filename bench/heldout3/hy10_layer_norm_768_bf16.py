"""LayerNorm over a 768-wide last dimension in bf16 with affine weights, 1M rows (a transformer's
hidden states): many short rows."""
import torch
import torch.nn as nn

rows = 1 << 20
hidden = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(hidden).to(torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(rows, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
