"""Attention-style softmax in float16: scores masked above the diagonal with -inf, (32, 16, 1024, 1024)."""
import torch
import torch.nn as nn

batch = 32
heads = 16
seq = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, scores):
        return torch.softmax(scores.masked_fill(self.mask, float("-inf")), dim=-1)


def get_inputs():
    return [torch.randn(batch, heads, seq, seq, dtype=torch.float16)]


def get_init_inputs():
    return []
