"""Two-rate signal encoder; Inductor's scalar C++ kernels fail to compile its tanh.

The encoder reads the input at full rate and, for a coarse branch, every second time step
(`x[..., ::2]`, a strided view). Inductor cannot vectorize the strided read and prints that
kernel with the scalar C++ code generator (`cpp`), where the planted bug prints tanh as
`compile error!`. The full-rate branch is vectorized and has no tanh.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("tanh", "compile_error", paths=("cpp",))


class TwoRateEncoder(nn.Module):
    def __init__(self, channels=8, hidden=32, classes=4):
        super().__init__()
        self.fine = nn.Conv1d(channels, hidden, 5, padding=2)
        self.fine_norm = nn.GroupNorm(4, hidden)
        self.fine2 = nn.Conv1d(hidden, hidden, 3, padding=1)
        self.fine_norm2 = nn.GroupNorm(4, hidden)
        self.coarse = nn.Linear(channels, hidden)
        self.coarse_norm = nn.LayerNorm(hidden)
        self.proj = nn.Linear(2 * hidden, hidden)
        self.mid = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        fine = F.silu(self.fine_norm(self.fine(x)))
        fine = (fine + F.silu(self.fine_norm2(self.fine2(fine)))).mean(-1)
        coarse = torch.tanh(x[..., ::2]).mean(-1)  # strided view: a scalar kernel
        coarse = F.gelu(self.coarse_norm(self.coarse(coarse)))
        h = F.gelu(self.proj(torch.cat([fine, coarse], dim=-1)))
        h = h + F.gelu(self.mid(h))
        return torch.log_softmax(self.head(h), dim=-1)


def main():
    torch.manual_seed(0)
    model = TwoRateEncoder().eval()
    x = torch.randn(6, 8, 120)
    compiled = torch.compile(model)
    with torch.no_grad():
        log_probs = compiled(x)
    print("classes:", log_probs.argmax(-1).tolist())


if __name__ == "__main__":
    main()
