"""Control (user mistake, eager fails too): softmax over dim=2 of a 2-D tensor.

Not from an issue. Eager raises `IndexError: Dimension out of range (expected to be in range of
[-2, 1], but got 2)`; compiled raises it from Dynamo's fake run. Expected: minify exit 2.
"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=2)  # meant dim=-1


torch.manual_seed(0)
model = torch.compile(Classifier())
print(model(torch.randn(2, 16)))
