"""2-D average pooling with a 7x7 window (stride 2, padding 3, padding counted): a window of more
than 25 elements, which torch.compile leaves to ATen's avg_pool2d library call (no Triton
lowering), so kopt's vendor region applies."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [7, 2, 3]
