"""Mean over a last dimension of 1000 in float16, keepdim (not a power of two)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 524288
cols = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x.mean(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
