"""MaxPool1d, window 4, stride 4 (non-overlapping), over long sequences."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
channels = 128
length = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return F.max_pool1d(x, 4, 4)


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return []
