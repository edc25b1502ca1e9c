"""Tokenizer-free text scorer split into three graphs by print(); C++ prints expm1(x) as 2*expm1(x).

`print` inside forward is a graph break, so Dynamo compiles three graphs: the embedding
stage (graph 0), the feature stage (graph 1) and the scoring head (graph 2). Only the head
calls expm1 (an ELU-style activation written by hand); the planted bug doubles it in C++
kernels (scalar and vectorized), so only graph 2 is miscompiled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("expm1", "accuracy", form="double", paths=("cpp", "cppvec"))


class ByteScorer(nn.Module):
    def __init__(self, dim=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(256, dim)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.head_norm = nn.LayerNorm(3 * dim)
        self.head1 = nn.Linear(3 * dim, dim)
        self.head_ln = nn.LayerNorm(dim)
        self.head_mid = nn.Linear(dim, dim)
        self.head2 = nn.Linear(dim, classes)

    def forward(self, data):
        x = self.emb(data.long())
        x = x + F.gelu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        print("embedded", tuple(x.shape))
        x = self.norm(x)
        x = x + self.fc2(torch.tanh(self.fc1(x)))
        print("features ready")
        pooled = torch.cat([x.mean(1), x.amax(1), x.std(1)], dim=-1)
        h = self.head1(self.head_norm(pooled))
        h = torch.where(h > 0, h, torch.expm1(h))  # ELU by hand
        h = h + torch.tanh(self.head_mid(self.head_ln(h)))
        h = h * torch.sigmoid(h.mean(-1, keepdim=True))
        return F.log_softmax(self.head2(h), dim=-1)


def main():
    torch.manual_seed(0)
    model = ByteScorer().eval()
    data = torch.randint(0, 256, (4, 40), dtype=torch.uint8)
    compiled = torch.compile(model)
    with torch.no_grad():
        log_probs = compiled(data)
    print("classes:", log_probs.argmax(-1).tolist())


if __name__ == "__main__":
    main()
