"""AvgPool2d, 3x3 window, stride 1, padding 1, the padding not counted (count_include_pad=False),
over a (64, 64, 256, 256) float16 input."""
import torch
import torch.nn as nn

batch = 64
channels = 64
size = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size, dtype=torch.float16)]


def get_init_inputs():
    return []
