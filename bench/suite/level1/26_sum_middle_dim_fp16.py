"""Sum over the middle dimension in float16: 8192 strided half values per output, accumulated wider and cast back."""
import torch
import torch.nn as nn

batch = 64
reduce_len = 8192
cols = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(batch, reduce_len, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
