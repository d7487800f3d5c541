"""Reverse cumulative sum along the last axis of a (16384, 16384) bfloat16 matrix
(flip, cumsum, flip)."""
import torch
import torch.nn as nn

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x.flip(-1), dim=-1).flip(-1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
