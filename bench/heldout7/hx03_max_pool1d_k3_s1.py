"""MaxPool1d, window 3, stride 1, padding 1, over (64, 128, 16384) float32: each input read by three outputs."""
import torch
import torch.nn as nn

batch = 64
channels = 128
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(3, stride=1, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
