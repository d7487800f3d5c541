"""LayerNorm over 16,384 features with a learned affine: mean and variance in one looped reduction, then a normalize pass."""
import torch
import torch.nn as nn

tokens = 32768
features = 16384


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features, eps=1e-5)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(tokens, features) * 2.0 + 0.5]


def get_init_inputs():
    return [features]
