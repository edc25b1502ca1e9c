"""Residual MLP whose layer-norm decomposition adds one to the normalized output.

aten.native_layer_norm is decomposed by Inductor's table while AOTAutograd traces; the
planted entry returns (output + 1, mean, rstd). Wrong from the `aot_eager_decomp_partition`
stage on; `aot_eager` is right.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("decomposition:native_layer_norm:accuracy:add_one")


class ResidualMLP(nn.Module):
    def __init__(self, dim=40, hidden=80, blocks=2, classes=7):
        super().__init__()
        self.inp = nn.Linear(12, dim)
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(blocks))
        self.fc1 = nn.ModuleList(nn.Linear(dim, hidden) for _ in range(blocks))
        self.fc2 = nn.ModuleList(nn.Linear(hidden, dim) for _ in range(blocks))
        self.out = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.inp(x)
        for norm, fc1, fc2 in zip(self.norms, self.fc1, self.fc2):
            h = h + fc2(torch.tanh(fc1(norm(h))))
        return F.log_softmax(self.out(h), dim=-1)


def main():
    torch.manual_seed(0)
    model = ResidualMLP().eval()
    x = torch.randn(24, 12)
    compiled = torch.compile(model)
    with torch.no_grad():
        log_probs = compiled(x)
    print("predicted:", log_probs.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
