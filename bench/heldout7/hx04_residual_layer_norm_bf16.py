"""A residual add then LayerNorm over 12,288 bfloat16 features (32,768 rows): x + y normalised,
with weight and bias."""
import torch
import torch.nn as nn

rows = 32768
features = 12288


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(features, dtype=torch.bfloat16)

    def forward(self, x, y):
        return self.norm(x + y)


def get_inputs():
    return [torch.randn(rows, features, dtype=torch.bfloat16), torch.randn(rows, features, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
