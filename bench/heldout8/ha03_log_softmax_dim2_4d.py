"""log_softmax over the third axis of a (16, 32, 512, 512) float32 tensor: 512 values a softmax,
strided by 512, with two outer axes."""
import torch
import torch.nn as nn

shape = (16, 32, 512, 512)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=2)


def get_inputs():
    return [torch.randn(*shape)]


def get_init_inputs():
    return []
