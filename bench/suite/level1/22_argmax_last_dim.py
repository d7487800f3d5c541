"""Argmax over the last dimension (32,768 columns): a reduction carrying (value, index) pairs, int64 output."""
import torch
import torch.nn as nn

rows = 16384
cols = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
