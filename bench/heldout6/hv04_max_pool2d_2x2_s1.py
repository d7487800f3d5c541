"""MaxPool2d, 2x2 window, stride 1 (each input row read by two output rows), over a
(64, 96, 192, 192) float32 input."""
import torch
import torch.nn as nn

batch = 64
channels = 96
size = 192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, stride=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return []
