"""Softmax over the last axis of a (32768, 12000) bfloat16 matrix (rows of a width that is not a
power of two)."""
import torch
import torch.nn as nn

rows = 32768
cols = 12000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
