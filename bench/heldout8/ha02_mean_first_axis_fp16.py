"""Mean over the first axis of a (4096, 65536) float16 matrix: 65,536 results, each of 4,096
strided values."""
import torch
import torch.nn as nn

rows = 4096
cols = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=0)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
