"""Causal attention probabilities from fp16 scores: masked_fill with -inf above the diagonal, a 1/sqrt(d) scale, softmax over the keys."""
import math

import torch
import torch.nn as nn

batch = 8
heads = 16
seq = 2048
head_dim = 64


class Model(nn.Module):
    def __init__(self, seq: int, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, scores):
        return torch.softmax(scores.masked_fill(self.causal, float("-inf")) * self.scale, dim=-1)


def get_inputs():
    return [torch.randn(batch, heads, seq, seq, dtype=torch.float16) * 4.0]


def get_init_inputs():
    return [seq, head_dim]
