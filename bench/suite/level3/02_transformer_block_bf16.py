"""A bf16 pre-norm transformer block with explicit causal attention (softmax of QK^T in fp32, then V) and a GELU MLP."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
seq_len = 2048
d_model = 1024
n_heads = 16
mlp_ratio = 4


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int, seq_len: int):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, mlp_ratio * d_model)
        self.down = nn.Linear(mlp_ratio * d_model, d_model)
        self.register_buffer("causal", torch.ones(seq_len, seq_len, dtype=torch.bool).tril())
        self.to(torch.bfloat16)

    def attention(self, x):
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        scores = scores.masked_fill(~self.causal[:s, :s], float("-inf"))
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(out)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def get_inputs():
    return [torch.randn(batch, seq_len, d_model, dtype=torch.bfloat16)]


def get_init_inputs():
    return [d_model, n_heads, mlp_ratio, seq_len]
