"""Sum over the middle dimension with keepdim=True: 4096 strided values reduced per (batch, column) output."""
import torch
import torch.nn as nn

batch = 128
reduce_len = 4096
cols = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch, reduce_len, cols)]


def get_init_inputs():
    return []
