"""AvgPool3d, 3x3x3 window, stride 2, padding 1, padding excluded from the count: a per-output divisor at the borders."""
import torch
import torch.nn as nn

batch = 16
channels = 32
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, depth, height, width)]


def get_init_inputs():
    return [3, 2, 1]
