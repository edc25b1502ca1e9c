"""Program shape: `torch._dynamo.mark_dynamic` on the sequence dimension, with `fullgraph=True`.

Plant: the C++ code generators (scalar and vectorized) print sigmoid as `compile error!`
(`inject_bug("sigmoid", "compile_error", paths=("cpp", "cppvec"))`), so the kernel of the
dynamic-shape graph fails to build (CppCompileError).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind compile_error, stage
inductor, culprit op sigmoid.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("sigmoid", "compile_error", paths=("cpp", "cppvec"))


class GatedPooler(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.value = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)

    def forward(self, x):
        h = self.norm(x)
        h = self.value(h) * torch.sigmoid(self.gate(h))
        return h.mean(1)


def main():
    torch.manual_seed(0)
    model = GatedPooler().eval()
    compiled = torch.compile(model, fullgraph=True)
    pooled = []
    with torch.no_grad():
        for seq in (6, 11):
            x = torch.randn(3, seq, 16)
            torch._dynamo.mark_dynamic(x, 1)
            pooled.append(compiled(x))
    print("pooled", [round(p.sum().item(), 4) for p in pooled])
    return pooled


if __name__ == "__main__":
    main()
