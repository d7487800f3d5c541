"""MaxPool2d, 3x3 window, stride 1, padding 1 (every input element read by nine windows)."""
import torch
import torch.nn as nn

batch = 64
channels = 64
h = 224
w = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=1, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch, channels, h, w)]


def get_init_inputs():
    return []
