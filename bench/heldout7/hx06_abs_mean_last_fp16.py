"""Mean of absolute values over the last axis (8,192) of a (16, 8192, 8192) float16 tensor
(an L1 mean, no keepdim)."""
import torch
import torch.nn as nn

batch = 16
rows = 8192
cols = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(torch.abs(x), dim=-1)


def get_inputs():
    return [torch.randn(batch, rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
