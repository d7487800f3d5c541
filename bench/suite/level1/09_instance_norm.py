"""InstanceNorm2d with affine weights: one 320 x 320 spatial reduction per (sample, channel) pair."""
import torch
import torch.nn as nn

batch = 32
channels = 128
height = 320
width = 320


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width) + 1.0]


def get_init_inputs():
    return [channels]
