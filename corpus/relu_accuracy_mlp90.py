"""Small pre-norm transformer encoder for tabular tokens, with Inductor's relu accuracy bug.

`torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"` makes the C++ backend
print relu(x) as `x + 1`. The model compiles to one Dynamo graph of about 90 FX nodes
(parameters included) and has exactly one torch.relu, in the second block's feed-forward
layer; every other activation is GELU, SiLU or tanh, none of which lowers to relu.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class Block(nn.Module):
    def __init__(self, dim, heads, act):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.act = act

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class TabularEncoder(nn.Module):
    def __init__(self, features=12, dim=32, heads=4, classes=3):
        super().__init__()
        self.embed = nn.Linear(1, dim)
        self.feature_pos = nn.Parameter(torch.randn(features, dim) * 0.02)
        self.block1 = Block(dim, heads, F.gelu)
        self.block2 = Block(dim, heads, torch.relu)  # the model's one relu
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, rows):
        x = self.embed(rows.unsqueeze(-1)) + self.feature_pos
        x = self.block2(self.block1(x))
        pooled = F.silu(self.norm(x)).mean(dim=1)
        return torch.tanh(self.head(pooled))


def main():
    torch.manual_seed(0)
    model = TabularEncoder().eval()
    rows = torch.randn(16, 12)

    compiled = torch.compile(model)
    with torch.no_grad():
        scores = compiled(rows)
    print("scores[0]:", scores[0])


if __name__ == "__main__":
    main()
