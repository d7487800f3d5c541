"""Max over the middle dimension of a 3-D tensor."""
import torch
import torch.nn as nn

batch_size = 128
dim1 = 4096
dim2 = 256


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.max(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]
