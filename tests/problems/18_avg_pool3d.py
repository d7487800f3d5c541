"""3-D average pooling, 3x3x3 window, stride 2, padding 1, padding not counted: torch.compile keeps
it as ATen's avg_pool3d library call (no Triton lowering), which kopt can replace (a vendor region)."""
import torch
import torch.nn as nn

batch_size = 4
channels = 16
depth = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [3, 2, 1]
