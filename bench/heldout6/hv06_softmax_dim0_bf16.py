"""softmax over the first axis (4,096) of a (4096, 65536) bfloat16 tensor."""
import torch
import torch.nn as nn

rows = 4096
cols = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
