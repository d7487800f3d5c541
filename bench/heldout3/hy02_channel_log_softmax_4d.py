"""Log-softmax over the channels of an NCHW tensor (150 classes, a segmentation head): the reduced
axis is strided by H*W and its length is not a power of two."""
import torch
import torch.nn as nn

batch = 48
classes = 150
h = 128
w = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, classes, h, w)]


def get_init_inputs():
    return []
