"""InstanceNorm2d without affine parameters over (64, 64, 256, 256) float16 images: one
normalisation per image and channel, 65,536 values each."""
import torch
import torch.nn as nn

batch = 64
channels = 64
size = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size, dtype=torch.float16)]


def get_init_inputs():
    return []
