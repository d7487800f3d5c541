"""GroupNorm with 16 groups over a 1-D signal: (128, 256, 8192), statistics over 16 channels x 8,192."""
import torch
import torch.nn as nn

batch = 128
channels = 256
length = 8192
groups = 16


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
