"""Mean over the outermost dimension (a column reduction: the reduced dim is strided)."""
import torch
import torch.nn as nn

rows = 16384
cols = 8192


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [0]
