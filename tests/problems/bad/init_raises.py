import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        raise ValueError(f"cannot build with n={n}")

    def forward(self, x):
        return x

def get_inputs():
    return [torch.randn(8, 8)]

def get_init_inputs():
    return [3]
