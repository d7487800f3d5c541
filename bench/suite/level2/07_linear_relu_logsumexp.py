"""Linear -> ReLU -> logsumexp over features: a GEMM followed by a max-shifted exp-sum row reduction."""
import torch
import torch.nn as nn

batch = 131072
in_features = 4096
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.logsumexp(torch.relu(self.fc(x)), dim=1)


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
