"""CUDA gated MLP; Inductor's Triton code generator prints sigmoid as `compile error!`.

Needs a CUDA GPU. The generated Triton kernel for the GLU gate is not valid Python, so
compiling the model fails (a compile error from Triton/Inductor).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sigmoid", "compile_error", paths=("triton",))


class GatedMLP(nn.Module):
    def __init__(self, dim=64, hidden=128):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.value = nn.Linear(dim, hidden)
        self.gate = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        h = self.norm(x)
        x = x + self.down(self.value(h) * torch.sigmoid(self.gate(h)))
        return self.head(F.gelu(x))


def main():
    torch.manual_seed(0)
    model = GatedMLP().cuda().eval()
    x = torch.randn(32, 64, device="cuda")
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(x)
    print("predicted:", logits.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
