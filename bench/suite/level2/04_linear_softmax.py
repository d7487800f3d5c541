"""Classifier head Linear(8192 -> 1000) -> softmax: a GEMM with a narrow output, then a short-row softmax over 1000 classes."""
import torch
import torch.nn as nn

batch = 65536
in_features = 8192
classes = 1000


class Model(nn.Module):
    def __init__(self, in_features: int, classes: int):
        super().__init__()
        self.fc = nn.Linear(in_features, classes)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, classes]
