"""MaxPool2d with a 2 x 2 window and stride 2 over a (64, 64, 256, 256) float16 NCHW tensor."""
import torch
import torch.nn as nn

batch = 64
channels = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return []
