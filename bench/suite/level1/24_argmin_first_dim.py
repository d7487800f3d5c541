"""Argmin over the first dimension (4096 rows, 262,144 columns): a column-wise (value, index) reduction."""
import torch
import torch.nn as nn

reduce_len = 4096
cols = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmin(x, dim=0)


def get_inputs():
    return [torch.randn(reduce_len, cols)]


def get_init_inputs():
    return []
