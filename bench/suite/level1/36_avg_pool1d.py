"""AvgPool1d, kernel 8, stride 4, padding 2 (padding counted in the average): a sliding mean with 2x overlap."""
import torch
import torch.nn as nn

batch = 256
channels = 128
length = 16384


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [8, 4, 2]
