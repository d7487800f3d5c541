"""Cumulative product along the last axis (4,096) of a (65536, 4096) float32 tensor of values near 1
(1 + 0.001 x, so the products stay finite)."""
import torch
import torch.nn as nn

rows = 65536
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumprod(x, dim=1)


def get_inputs():
    return [1 + 0.001 * torch.randn(rows, cols)]


def get_init_inputs():
    return []
