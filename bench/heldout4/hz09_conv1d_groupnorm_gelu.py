"""Conv1d (128 -> 256 channels, kernel 3) followed by GroupNorm(8) and GELU, over length 8,192."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
in_channels = 128
out_channels = 256
length = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=3)
        self.norm = nn.GroupNorm(8, out_channels)

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch, in_channels, length)]


def get_init_inputs():
    return []
