"""Swish with a per-column bias, x * sigmoid(x) + b: a pointwise op with a broadcast parameter (2 GiB in, 2 GiB out)."""
import torch
import torch.nn as nn

rows = 8192
cols = 65536


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.b = nn.Parameter(torch.randn(cols))

    def forward(self, x):
        return x * torch.sigmoid(x) + self.b


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
