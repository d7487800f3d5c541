"""Conv2d (64 -> 128 channels, 3x3, padding 1) followed by GroupNorm(16) and SiLU over 128 x 128
images: a cuDNN convolution, then Inductor's group statistics and a normalise + SiLU kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
in_channels = 64
out_channels = 128
size = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(16, out_channels)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch, in_channels, size, size)]


def get_init_inputs():
    return []
