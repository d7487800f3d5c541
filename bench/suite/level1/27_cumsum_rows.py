"""Cumulative sum along 32,768-wide rows: an inclusive scan, which Inductor lowers to tl.associative_scan."""
import torch
import torch.nn as nn

rows = 16384
cols = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
