"""Max values over the middle dimension (torch.max(...).values): a strided max reduction, indices computed and dropped."""
import torch
import torch.nn as nn

batch = 96
reduce_len = 8192
cols = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.max(x, dim=1).values


def get_inputs():
    return [torch.randn(batch, reduce_len, cols)]


def get_init_inputs():
    return []
