"""LayerNorm in bfloat16 over the last two dimensions (256 x 256 = 65,536 values per row): a wide row in a narrow dtype."""
import torch
import torch.nn as nn

batch = 16384
dim1 = 256
dim2 = 256


class Model(nn.Module):
    def __init__(self, dim1: int, dim2: int):
        super().__init__()
        self.ln = nn.LayerNorm((dim1, dim2))
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)
        self.ln.to(torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch, dim1, dim2, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim1, dim2]
