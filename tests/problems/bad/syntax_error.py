import torch
import torch.nn as nn

class Model(nn.Module)
    def forward(self, x):
        return x + 1
