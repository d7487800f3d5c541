"""GroupNorm, 32 groups over 256 channels: each group reduces 8 channels x 128 x 128 = 131K values before normalizing."""
import torch
import torch.nn as nn

batch = 96
channels = 256
groups = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels, eps=1e-5)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels, groups]
