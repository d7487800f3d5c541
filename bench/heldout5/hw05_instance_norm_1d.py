"""InstanceNorm1d (no affine) over a (64, 512, 8192) float32 signal: each (sample, channel) row of
8,192 normalised."""
import torch
import torch.nn as nn

batch = 64
channels = 512
length = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm1d(channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
