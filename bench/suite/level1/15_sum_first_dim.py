"""Sum over the first dimension (4096 rows into one): a column reduction where contiguous threads must walk down rows."""
import torch
import torch.nn as nn

reduce_len = 4096
cols = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=0)


def get_inputs():
    return [torch.randn(reduce_len, cols)]


def get_init_inputs():
    return []
