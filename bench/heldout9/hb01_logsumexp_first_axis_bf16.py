"""logsumexp over the first axis of a (16384, 16384) bfloat16 matrix: 16,384 values a result, 16,384
results."""
import torch
import torch.nn as nn

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
