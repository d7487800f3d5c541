"""log_softmax over 65,536-wide rows of an (8192, 65536) bfloat16 matrix: a wide row in a narrow dtype."""
import torch
import torch.nn as nn

rows = 8192
cols = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
