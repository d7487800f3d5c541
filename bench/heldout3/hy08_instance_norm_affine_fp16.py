"""InstanceNorm2d with a learned affine transform, in float16, over 96 x 96 planes."""
import torch
import torch.nn as nn

batch = 256
channels = 128
h = 96
w = 96


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True).to(torch.float16)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch, channels, h, w, dtype=torch.float16)]


def get_init_inputs():
    return []
