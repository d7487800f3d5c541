"""GroupNorm(16) with weight and bias over a (64, 256, 16384) bfloat16 signal: 16 channels of
16,384 a group."""
import torch
import torch.nn as nn

batch = 64
channels = 256
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(16, channels, dtype=torch.bfloat16)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, length, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
