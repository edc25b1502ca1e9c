"""bfloat16 SwiGLU feed-forward whose SiLU decomposition negates its output.

The model runs in bfloat16. Inductor decomposes aten.silu while AOTAutograd traces; the
planted entry returns -silu(x), so the output is wrong from the `aot_eager_decomp_partition`
stage on, far beyond bf16 rounding.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("decomposition:silu:accuracy:negate")


class SwiGLU(nn.Module):
    def __init__(self, dim=64, hidden=128, layers=3):
        super().__init__()
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.gates = nn.ModuleList(nn.Linear(dim, hidden, bias=False) for _ in range(layers))
        self.ups = nn.ModuleList(nn.Linear(dim, hidden, bias=False) for _ in range(layers))
        self.downs = nn.ModuleList(nn.Linear(hidden, dim, bias=False) for _ in range(layers))

    def forward(self, x):
        for norm, gate, up, down in zip(self.norms, self.gates, self.ups, self.downs):
            h = norm(x)
            x = x + down(F.silu(gate(h)) * up(h))
        return x


def main():
    torch.manual_seed(0)
    model = SwiGLU().to(torch.bfloat16).eval()
    x = torch.randn(2, 12, 64, dtype=torch.bfloat16)
    compiled = torch.compile(model)
    with torch.no_grad():
        y = compiled(x)
    print("output norm:", float(y.float().norm()))


if __name__ == "__main__":
    main()
