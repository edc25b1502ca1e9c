"""Classifier confidence from log-probabilities; C++ max reductions start at 0, not -inf.

The confidence is amax over log-probabilities, which are all negative, so an accumulator
that starts at 0 returns 0 (probability 1) for every sample. The bug hides elsewhere: the
log_softmax inside the model also takes a max, but shifting by max(0, true max) gives the
same log-probabilities. Only the final amax is wrong.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("reduction:max:zero@cpp")


class ConfidenceNet(nn.Module):
    def __init__(self, features=20, hidden=48, classes=20):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)
        self.temperature = nn.Parameter(torch.tensor(1.0))
        self.bias_prior = nn.Parameter(torch.zeros(classes))

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = h + torch.tanh(self.fc2(h))
        h = h + F.gelu(self.fc3(self.norm2(h)))
        logits = self.out(h) / F.softplus(self.temperature) + self.bias_prior
        log_probs = F.log_softmax(logits, dim=-1)
        confidence = torch.amax(log_probs, dim=-1).exp()
        return log_probs, confidence


def main():
    torch.manual_seed(0)
    model = ConfidenceNet().eval()
    x = torch.randn(16, 20)
    compiled = torch.compile(model)
    with torch.no_grad():
        log_probs, confidence = compiled(x)
    print("confidence[:4]:", confidence[:4])


if __name__ == "__main__":
    main()
