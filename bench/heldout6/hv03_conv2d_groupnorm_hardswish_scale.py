"""Conv2d (32 -> 64 channels, 3x3, no padding) followed by GroupNorm(8), HardSwish and a scale of
0.5 over 258 x 258 images (256 x 256 after the convolution)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
in_channels = 32
out_channels = 64
size = 258


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.GroupNorm(8, out_channels)

    def forward(self, x):
        return F.hardswish(self.norm(self.conv(x))) * 0.5


def get_inputs():
    return [torch.randn(batch, in_channels, size, size)]


def get_init_inputs():
    return []
