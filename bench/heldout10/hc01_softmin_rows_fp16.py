"""softmin over the last axis (8,192) of a (32768, 8192) float16 matrix: softmax of the negated input."""
import torch
import torch.nn as nn

rows = 32768
cols = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.softmin(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
