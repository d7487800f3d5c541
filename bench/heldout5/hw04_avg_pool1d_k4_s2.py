"""AvgPool1d, window 4, stride 2, padding 1 (windows overlap), over a (128, 256, 16384) float32
signal."""
import torch
import torch.nn as nn

batch = 128
channels = 256
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(4, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
