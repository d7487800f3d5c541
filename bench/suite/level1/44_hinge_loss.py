"""Hinge loss mean(clamp(1 - y * f(x), min=0)) with +-1 labels: a clamp fused into a full mean reduction."""
import torch
import torch.nn as nn

rows = 32768
cols = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, labels):
        return torch.clamp(1.0 - labels * scores, min=0.0).mean()


def get_inputs():
    scores = torch.randn(rows, cols)
    labels = torch.randint(0, 2, (rows, cols)).float() * 2.0 - 1.0
    return [scores, labels]


def get_init_inputs():
    return []
