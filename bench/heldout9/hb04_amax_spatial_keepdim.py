"""Maximum over the two spatial axes of a (32, 256, 128, 128) float32 NCHW tensor, keepdim (a
global max pool written as amax)."""
import torch
import torch.nn as nn

batch = 32
channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=(2, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []
