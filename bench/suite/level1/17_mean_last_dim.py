"""Mean over the last dimension (65,536 contiguous values per row): a long inner reduction, one output per row."""
import torch
import torch.nn as nn

rows = 24576
cols = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols) + 0.25]


def get_init_inputs():
    return []
