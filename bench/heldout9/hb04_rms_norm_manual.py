"""RMS normalisation written out by hand over rows of 4,096 float32 values, with a learned scale:
x * rsqrt(mean(x^2) + eps) * weight."""
import torch
import torch.nn as nn

rows = 32768
features = 4096


class Model(nn.Module):
    def __init__(self, features: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features) * 0.1 + 1.0)
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(rows, features)]


def get_init_inputs():
    return [features]
