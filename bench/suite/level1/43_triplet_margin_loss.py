"""Triplet margin loss (L2, margin 1.0) over 65,536 triplets of 4096-d embeddings: two row norms and a hinge, then a mean."""
import torch
import torch.nn as nn

triplets = 65536
embed = 4096


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0)

    def forward(self, anchor, positive, negative):
        return self.loss(anchor, positive, negative)


def get_inputs():
    anchor = torch.randn(triplets, embed)
    positive = anchor + 0.5 * torch.randn(triplets, embed)
    negative = torch.randn(triplets, embed)
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]
