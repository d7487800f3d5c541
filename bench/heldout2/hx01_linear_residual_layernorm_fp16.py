"""fp16 Linear -> + residual -> LayerNorm (a post-norm transformer sublayer's end): cuBLAS GEMM, then the bias and the residual add fused into the row-norm kernel."""
import torch
import torch.nn as nn

tokens = 65536
hidden = 4096


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.fc = nn.Linear(hidden, hidden)
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)
        self.half()

    def forward(self, x, residual):
        return self.ln(self.fc(x) + residual)


def get_inputs():
    return [torch.randn(tokens, hidden, dtype=torch.float16), torch.randn(tokens, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden]
