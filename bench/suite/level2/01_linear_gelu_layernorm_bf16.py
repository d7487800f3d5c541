"""bf16 Linear -> GELU -> LayerNorm, an MLP-block epilogue: cuBLAS GEMM, then the GELU fused into a row-norm kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 196608
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features).to(torch.bfloat16)
        self.ln = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)
        self.ln.to(torch.bfloat16)

    def forward(self, x):
        return self.ln(F.gelu(self.fc(x)))


def get_inputs():
    return [torch.randn(tokens, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]
