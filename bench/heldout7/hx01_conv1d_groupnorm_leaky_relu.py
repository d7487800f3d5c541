"""Conv1d (64 -> 128 channels, kernel 3, padding 1) followed by GroupNorm(32) and LeakyReLU(0.1)
over a signal of 32,768: four channels a group."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32
in_channels = 64
out_channels = 128
length = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(32, out_channels)

    def forward(self, x):
        return F.leaky_relu(self.norm(self.conv(x)), 0.1)


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return []
