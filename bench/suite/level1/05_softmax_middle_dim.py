"""Softmax over the middle dimension of a 3-D tensor: the reduced axis is strided (stride 4096), not contiguous."""
import torch
import torch.nn as nn

batch = 64
channels = 2048
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
