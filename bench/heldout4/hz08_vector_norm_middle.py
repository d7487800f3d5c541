"""L2 vector norm over the middle axis (1,024) of a (256, 1024, 1024) tensor."""
import torch
import torch.nn as nn

batch = 256
mid = 1024
inner = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=2, dim=1)


def get_inputs():
    return [torch.randn(batch, mid, inner)]


def get_init_inputs():
    return []
