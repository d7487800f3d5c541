"""Min values over the first dimension (torch.min(x, dim=0).values): a column min across 8192 rows."""
import torch
import torch.nn as nn

reduce_len = 8192
cols = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.min(x, dim=0).values


def get_inputs():
    return [torch.randn(reduce_len, cols)]


def get_init_inputs():
    return []
