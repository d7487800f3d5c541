"""Reverse cumulative sum over the middle axis (512) of a (128, 512, 4096) float32 tensor
(torch.flip, cumsum, flip)."""
import torch
import torch.nn as nn

batch = 128
mid = 512
inner = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])


def get_inputs():
    return [torch.randn(batch, mid, inner)]


def get_init_inputs():
    return []
