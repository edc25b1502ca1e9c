"""Program shape: `torch.compile(model, fullgraph=True)` on a transformer feed-forward block.

Plant: Inductor's decomposition of aten.gelu returns 2 * gelu(x)
(`plant("decomposition:gelu:accuracy:double")`), so the bug shows from the
aot_eager_decomp_partition stage on, not only in Inductor's code generation.
Expected answer: exit 0, a verified repro of Dynamo graph 0 (the only graph), kind accuracy,
stage aot_eager_decomp_partition, culprit op gelu.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("decomposition:gelu:accuracy:double")


class FeedForward(nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


def main():
    torch.manual_seed(0)
    model = FeedForward().eval()
    compiled = torch.compile(model, fullgraph=True)
    x = torch.randn(4, 10, 32)
    with torch.no_grad():
        y = compiled(x)
    print("mean", round(y.mean().item(), 4))
    return y


if __name__ == "__main__":
    main()
