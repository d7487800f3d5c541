"""A linear layer whose weight rows are L2-normalised on every call (w = v / ||v||, then x @ w.T):
a Triton kernel that reads only a parameter (256 MB), then a cuBLAS GEMM with a small batch.
The weight-only kernel is most of the time; gate 4's weight rotation is what keeps a kernel from
returning what an earlier run left for the same weights."""
import torch
import torch.nn as nn

batch = 16
in_features = 32768
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.v = nn.Parameter(torch.randn(out_features, in_features))

    def forward(self, x):
        w = self.v / (torch.linalg.vector_norm(self.v, ord=2, dim=-1, keepdim=True) + 1e-12)
        return x @ w.t()


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
