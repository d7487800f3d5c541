"""LayerNorm(512) applied to x.transpose(1, 2) of a (64, 512, 8192) float32 signal: the normalised
axis is the input's middle (strided) one, the output is (64, 8192, 512)."""
import torch
import torch.nn as nn

batch = 64
channels = 512
length = 8192


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.ln = nn.LayerNorm(channels)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x.transpose(1, 2))


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels]
