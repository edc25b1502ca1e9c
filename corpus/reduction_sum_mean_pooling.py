"""Bag-of-words classifier; C++ sum reductions start their accumulator at 1 instead of 0.

Mean pooling over tokens is a sum reduction (then a division). The planted bug initializes
every C++ sum accumulator to 1, so each pooled value is off by 1/length and the logits are
wrong. The model has no other sum reduction (its norm uses a Welford reduction).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("reduction:sum:one@cpp")


class BagOfWords(nn.Module):
    def __init__(self, vocab=300, dim=32, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.tok_norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim)
        self.tok_fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.fc2 = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc3 = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, ids):
        x = torch.tanh(self.fc1(self.tok_norm(self.emb(ids))))
        x = x + F.gelu(self.tok_fc(x))
        pooled = x.mean(dim=1)  # sum over tokens / length
        h = F.gelu(self.fc2(self.norm(pooled)))
        h = h + torch.tanh(self.fc3(self.norm2(h)))
        return self.out(h)


def main():
    torch.manual_seed(0)
    model = BagOfWords().eval()
    ids = torch.randint(0, 300, (8, 25))
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(ids)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
