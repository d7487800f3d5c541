"""Cumulative sum over a 10,007-long last dimension in float16, accumulated in float32 and cast
back (the dtype argument of torch.cumsum)."""
import torch
import torch.nn as nn

rows = 32768
length = 10007


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1, dtype=torch.float32).to(torch.float16)


def get_inputs():
    return [torch.randn(rows, length, dtype=torch.float16)]


def get_init_inputs():
    return []
