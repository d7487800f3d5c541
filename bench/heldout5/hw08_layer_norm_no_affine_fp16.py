"""LayerNorm without weight or bias (elementwise_affine=False) over rows of 8,192 of a
(32768, 8192) float16 input."""
import torch
import torch.nn as nn

rows = 32768
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(rows, dim, dtype=torch.float16)]


def get_init_inputs():
    return []
