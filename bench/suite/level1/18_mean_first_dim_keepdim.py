"""Mean over the first dimension of a 3-D tensor with keepdim=True: the outer reduction of a batch average."""
import torch
import torch.nn as nn

reduce_len = 1024
dim1 = 96
dim2 = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=0, keepdim=True)


def get_inputs():
    return [torch.randn(reduce_len, dim1, dim2)]


def get_init_inputs():
    return []
