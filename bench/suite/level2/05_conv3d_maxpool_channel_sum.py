"""Conv3d -> MaxPool3d(2) -> sum over channels: cuDNN 3-D convolution, a pooling kernel and a channel reduction."""
import torch
import torch.nn as nn

batch = 20
in_channels = 16
out_channels = 32
depth = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x):
        return torch.sum(self.pool(self.conv(x)), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
