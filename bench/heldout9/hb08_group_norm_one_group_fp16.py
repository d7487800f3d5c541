"""GroupNorm with a single group (each sample normalised over all its channels and pixels) of a
(64, 128, 128, 128) float16 NCHW tensor, with per-channel affine parameters."""
import torch
import torch.nn as nn

batch = 64
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.gn = nn.GroupNorm(1, channels, dtype=torch.float16)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [channels]
