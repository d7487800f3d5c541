"""Conv1d (64 -> 128 channels, kernel 3, padding 1) in float16, then GroupNorm(16) and SiLU over a
signal of 32,768: a cuDNN convolution, then Inductor's 16-bit group statistics and a normalise +
SiLU kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
in_channels = 64
out_channels = 128
length = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 3, padding=1, dtype=torch.float16)
        self.norm = nn.GroupNorm(16, out_channels, dtype=torch.float16)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch, in_channels, length, dtype=torch.float16)]


def get_init_inputs():
    return []
