"""log_softmax over the first axis (2,048) of a (2048, 131072) float16 tensor."""
import torch
import torch.nn as nn

rows = 2048
cols = 131072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=0)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.float16)]


def get_init_inputs():
    return []
