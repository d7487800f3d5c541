"""Cumulative sum over the middle axis of a (32, 4096, 1024) float16 tensor."""
import torch
import torch.nn as nn

batch = 32
length = 4096
width = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch, length, width, dtype=torch.float16)]


def get_init_inputs():
    return []
