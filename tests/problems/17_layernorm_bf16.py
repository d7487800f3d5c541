"""LayerNorm over the last dimension in bfloat16 (weights and input): a narrow output dtype, where
gate 3's float64 bound is sized by bf16's rounding (the red-team case of a candidate flushing
small outputs that the dtype-sized bound alone would let through)."""
import torch
import torch.nn as nn

batch_size = 4096
hidden = 8192


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)
        self.ln.to(torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden]
