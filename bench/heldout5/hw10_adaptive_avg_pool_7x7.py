"""AdaptiveAvgPool2d to 7 x 7 from 56 x 56 (8 x 8 windows) over a (256, 512, 56, 56) float32
input."""
import torch
import torch.nn as nn

batch = 256
channels = 512
size = 56


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((7, 7))

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return []
