"""Row-wise amax in bfloat16 with keepdim=True over 16,384 columns: a max reduction on 2-byte loads."""
import torch
import torch.nn as nn

rows = 65536
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(rows, cols, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
