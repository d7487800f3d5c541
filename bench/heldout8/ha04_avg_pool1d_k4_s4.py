"""AvgPool1d, window 4, stride 4, over (64, 128, 32768) float32: every input element read once."""
import torch
import torch.nn as nn

batch = 64
channels = 128
length = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(4, stride=4)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
