"""The 3-norm of each row of a (32768, 4096) float32 matrix (torch.linalg.vector_norm, ord 3)."""
import torch
import torch.nn as nn

rows = 32768
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=3, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
