"""A fixed, non-trainable projection held in a buffer and L2-normalised row by row on every call
(w = B / ||B||, then x @ w.T): a Triton kernel that reads only a buffer (256 MB), then a cuBLAS
GEMM with a small batch. A user who loads other projection values (a checkpoint, a re-drawn
random feature map) changes the buffer; gate 4's buffer rotation is what keeps a kernel from
returning what an earlier run left for the same buffer."""
import torch
import torch.nn as nn

batch = 16
in_features = 32768
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.register_buffer("proj", torch.randn(out_features, in_features))

    def forward(self, x):
        w = self.proj / (torch.linalg.vector_norm(self.proj, ord=2, dim=-1, keepdim=True) + 1e-12)
        return x @ w.t()


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
