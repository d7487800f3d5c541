"""LayerNorm over the last three dimensions (C, H, W) with affine weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
c = 128
h = 64
w = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm((c, h, w))
        with torch.no_grad():
            self.ln.weight.add_(0.1 * torch.randn_like(self.ln.weight))
            self.ln.bias.add_(0.1 * torch.randn_like(self.ln.bias))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch, c, h, w)]


def get_init_inputs():
    return []
