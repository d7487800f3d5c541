"""GroupNorm with 8 groups over 128 channels in float16, affine."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 128
channels = 128
h = 128
w = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(8, channels).to(torch.float16)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch, channels, h, w, dtype=torch.float16)]


def get_init_inputs():
    return []
