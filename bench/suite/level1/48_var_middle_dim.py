"""Unbiased variance over the middle dimension with keepdim, on inputs with a non-zero mean (variance 9, mean 1)."""
import torch
import torch.nn as nn

batch = 32
dim1 = 4096
dim2 = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.var(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch, dim1, dim2) * 3.0 + 1.0]


def get_init_inputs():
    return [1]
