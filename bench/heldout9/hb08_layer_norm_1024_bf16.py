"""LayerNorm over rows of 1,024 bfloat16 values (262,144 rows), with elementwise affine."""
import torch
import torch.nn as nn

rows = 262144
features = 1024


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features, dtype=torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(rows, features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [features]
