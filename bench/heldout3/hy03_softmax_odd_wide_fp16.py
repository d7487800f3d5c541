"""Softmax over a 30,011-wide last dimension in float16 (a prime width: no vector-aligned chunks)."""
import torch
import torch.nn as nn

rows = 16384
width = 30011


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, width, dtype=torch.float16)]


def get_init_inputs():
    return []
