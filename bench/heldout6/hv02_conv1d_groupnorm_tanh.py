"""Conv1d (96 -> 192 channels, kernel 5) followed by GroupNorm(12) and tanh over a signal of
16,384 (16,380 after the convolution)."""
import torch
import torch.nn as nn

batch = 32
in_channels = 96
out_channels = 192
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=5)
        self.norm = nn.GroupNorm(12, out_channels)

    def forward(self, x):
        return torch.tanh(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return []
