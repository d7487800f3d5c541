"""log_softmax over the middle axis (2,048) of a (64, 2048, 2048) float32 tensor."""
import torch
import torch.nn as nn

batch = 64
mid = 2048
inner = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, mid, inner)]


def get_init_inputs():
    return []
