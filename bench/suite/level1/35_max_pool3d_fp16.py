"""MaxPool3d in float16, 3x3x3 window, stride 2, padding 1: 27 half loads per output over a 5-D volume, overlapping windows."""
import torch
import torch.nn as nn

batch = 24
channels = 32
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, depth, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [3, 2, 1]
