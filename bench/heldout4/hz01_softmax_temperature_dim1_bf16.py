"""Softmax with a temperature over the middle axis (4,096) of a bfloat16 (batch, 4096, 512) tensor."""
import torch
import torch.nn as nn

batch = 128
seq = 4096
dim = 512


class Model(nn.Module):
    def __init__(self, temperature: float = 0.7):
        super().__init__()
        self.temperature = temperature

    def forward(self, x):
        return torch.softmax(x / self.temperature, dim=1)


def get_inputs():
    return [torch.randn(batch, seq, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [0.7]
