"""softmax over the middle axis (1,000) of a (64, 1000, 3000) float32 tensor: an inner size no
power of two divides beyond 8."""
import torch
import torch.nn as nn

batch = 64
mid = 1000
inner = 3000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, mid, inner)]


def get_init_inputs():
    return []
