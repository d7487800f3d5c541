"""Softmax over the first axis of a (8192, 32768) float32 matrix: each column of 8,192 strided
values is one softmax."""
import torch
import torch.nn as nn

rows = 8192
cols = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
