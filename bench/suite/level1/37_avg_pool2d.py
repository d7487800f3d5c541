"""AvgPool2d, 5x5 window, stride 3, padding 2: overlapping windows with a 25-load mean per output."""
import torch
import torch.nn as nn

batch = 64
channels = 64
height = 320
width = 320


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [5, 3, 2]
