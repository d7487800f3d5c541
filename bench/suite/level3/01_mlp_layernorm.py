"""A residual MLP classifier: LayerNorm, three Linear+GELU layers, a residual add, a final LayerNorm and a linear head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 32768
in_features = 2048
hidden = 4096
classes = 1000


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, classes: int):
        super().__init__()
        self.norm_in = nn.LayerNorm(in_features)
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, in_features)
        self.norm_out = nn.LayerNorm(in_features)
        self.head = nn.Linear(in_features, classes)

    def forward(self, x):
        h = F.gelu(self.fc1(self.norm_in(x)))
        h = F.gelu(self.fc2(h))
        x = x + self.fc3(h)
        return self.head(self.norm_out(x))


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, hidden, classes]
