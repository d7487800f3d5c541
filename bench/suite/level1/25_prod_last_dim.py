"""Product over the last dimension (2048 values near 1, so it neither overflows nor vanishes): a multiplicative row reduction."""
import torch
import torch.nn as nn

rows = 262144
cols = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.prod(x, dim=-1)


def get_inputs():
    return [1.0 + 0.02 * torch.randn(rows, cols)]


def get_init_inputs():
    return []
