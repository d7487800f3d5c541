"""BatchNorm2d in training mode: per-channel statistics over batch, height and width (the reduced
axes are the first and the last two), then the normalisation and the running-stat update."""
import torch
import torch.nn as nn

batch = 128
channels = 96
h = 128
w = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch, channels, h, w)]


def get_init_inputs():
    return []
