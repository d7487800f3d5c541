"""MSE loss between two 16384 x 16384 fp32 matrices, mean over all elements (KernelBench-sized loss)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 16384
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return F.mse_loss(x, y)


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
