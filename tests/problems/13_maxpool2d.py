"""2-D max pooling, 2x2 window, stride 2."""
import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [2, 2]
