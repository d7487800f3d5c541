"""An LSTM: Inductor falls back to cuDNN's RNN kernels (few or no Triton kernels)."""
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(256, 256, num_layers=2, batch_first=True)

    def forward(self, x):
        out, _ = self.lstm(x)
        return out

def get_inputs():
    return [torch.randn(32, 64, 256)]

def get_init_inputs():
    return []
