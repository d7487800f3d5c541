"""fp16 Linear (1,024 -> 8,192) followed by log_softmax over its output features: a cuBLAS GEMM,
then a Triton row reduction over 8,192 columns."""
import torch
import torch.nn as nn

batch = 16384
in_features = 1024
out_features = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features).to(torch.float16)

    def forward(self, x):
        return torch.log_softmax(self.fc(x), dim=-1)


def get_inputs():
    return [torch.randn(batch, in_features, dtype=torch.float16)]


def get_init_inputs():
    return []
