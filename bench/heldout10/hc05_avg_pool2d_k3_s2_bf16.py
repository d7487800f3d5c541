"""AvgPool2d, 3x3 window, stride 2, padding 1 (padding counted), over a (32, 64, 512, 512) bfloat16 NCHW tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(32, 64, 512, 512, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
