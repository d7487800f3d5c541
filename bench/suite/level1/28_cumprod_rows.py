"""Cumulative product along 4096-long rows of values near 1 (1 + 0.01*randn): a multiplicative scan that stays finite."""
import torch
import torch.nn as nn

rows = 131072
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=-1)


def get_inputs():
    return [1.0 + 0.01 * torch.randn(rows, cols)]


def get_init_inputs():
    return []
