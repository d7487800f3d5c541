"""Binary cross-entropy with logits against soft targets, mean over a (16384, 8192) batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 16384
cols = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.binary_cross_entropy_with_logits(logits, targets)


def get_inputs():
    return [torch.randn(rows, cols) * 2.0, torch.rand(rows, cols)]


def get_init_inputs():
    return []
