"""AvgPool2d 2x2 stride 2 (non-overlapping windows) over a large feature map."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
channels = 64
h = 256
w = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.avg_pool2d(x, 2, 2)


def get_inputs():
    return [torch.randn(batch, channels, h, w)]


def get_init_inputs():
    return []
