"""MaxPool1d with dilation 3, kernel 4, stride 2 and padding 2: overlapping, gapped windows along 16,384 positions."""
import torch
import torch.nn as nn

batch = 128
channels = 256
length = 16384


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [4, 2, 2, 3]
