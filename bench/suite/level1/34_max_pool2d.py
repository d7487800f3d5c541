"""MaxPool2d, 3x3 window, stride 2, padding 1: overlapping windows, each input read by up to four outputs."""
import torch
import torch.nn as nn

batch = 64
channels = 96
height = 256
width = 256


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [3, 2, 1]
