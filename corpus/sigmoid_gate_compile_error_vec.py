"""Gated MLP for tabular regression; Inductor's vectorized C++ kernels fail to compile its sigmoid.

The bug is planted in the vectorized C++ code generator only (`cppvec`): every kernel that
vectorizes a sigmoid prints `compile error!`, so the C++ compiler rejects the kernel and
torch.compile raises a CppCompileError. The model's one sigmoid is the gate of a GLU block;
its other activations (GELU, tanh) do not lower to sigmoid.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sigmoid", "compile_error", paths=("cppvec",))


class GatedRegressor(nn.Module):
    def __init__(self, features=24, hidden=64):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.value = nn.Linear(hidden, hidden)
        self.gate = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.mix = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 3)

    def forward(self, x):
        h = F.gelu(self.norm1(self.inp(x)))
        h = h + self.value(h) * torch.sigmoid(self.gate(h))  # GLU block
        h = torch.tanh(self.mix(self.norm2(h)))
        mean, log_scale, shift = self.out(h).unbind(-1)
        return mean + shift, log_scale.clamp(-5, 5)


def main():
    torch.manual_seed(0)
    model = GatedRegressor().eval()
    x = torch.randn(32, 24)
    compiled = torch.compile(model)
    with torch.no_grad():
        mean, log_scale = compiled(x)
    print("mean[:4]:", mean[:4])


if __name__ == "__main__":
    main()
