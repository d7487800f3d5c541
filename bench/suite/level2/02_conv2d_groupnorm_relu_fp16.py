"""fp16 Conv2d -> GroupNorm -> ReLU: cuDNN convolution, then group statistics and a normalize+ReLU epilogue in Triton."""
import torch
import torch.nn as nn

batch = 128
in_channels = 64
out_channels = 128
groups = 16
height = 256
width = 256


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1).to(torch.float16)
        self.gn = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.5, 0.5)
        self.gn.to(torch.float16)

    def forward(self, x):
        return torch.relu(self.gn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch, in_channels, height, width, dtype=torch.float16)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
