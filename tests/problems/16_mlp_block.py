"""A small multi-layer model: two pre-norm MLP blocks with residuals, then a softmax head."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 1024
hidden = 4096
classes = 1000


class Block(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int, classes: int):
        super().__init__()
        self.blocks = nn.Sequential(Block(dim, hidden), Block(dim, hidden))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return torch.softmax(self.head(self.blocks(x)), dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, hidden, classes]
