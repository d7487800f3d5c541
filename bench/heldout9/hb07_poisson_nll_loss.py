"""Poisson negative log-likelihood (log input, mean) over two (16384, 8192) float32 tensors:
mean(exp(input) - target * input)."""
import torch
import torch.nn as nn

rows = 16384
cols = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.PoissonNLLLoss(log_input=True)

    def forward(self, log_rate, target):
        return self.loss(log_rate, target)


def get_inputs():
    return [torch.randn(rows, cols) * 0.5, torch.rand(rows, cols) * 4]


def get_init_inputs():
    return []
