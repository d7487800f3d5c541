"""Binary cross-entropy with logits (mean) between (8192, 16384) float32 logits and targets in
[0, 1]: one scalar out."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target)


def get_inputs():
    return [torch.randn(rows, cols), torch.rand(rows, cols)]


def get_init_inputs():
    return []
