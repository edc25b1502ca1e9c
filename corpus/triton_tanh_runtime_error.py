"""CUDA highway layer; Inductor's Triton code for tanh fails a device-side assert at run time.

Needs a CUDA GPU. The planted bug wraps tanh in `device_assert_then(x != x, ...)`, which
compiles but fails on every element when the kernel runs: a runtime error (CUDA device-side
assert) from the compiled model.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("tanh", "runtime_error", paths=("triton",))


class HighwayNet(nn.Module):
    def __init__(self, dim=64, layers=2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.hs = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.ts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.out = nn.Linear(dim, 3)

    def forward(self, x):
        x = self.norm(x)
        for h_layer, t_layer in zip(self.hs, self.ts):
            t = torch.sigmoid(t_layer(x))
            x = t * torch.tanh(h_layer(x)) + (1 - t) * x
        return self.out(x)


def main():
    torch.manual_seed(0)
    model = HighwayNet().cuda().eval()
    x = torch.randn(16, 64, device="cuda")
    compiled = torch.compile(model)
    with torch.no_grad():
        y = compiled(x)
        torch.cuda.synchronize()
    print("y[0]:", y[0])


if __name__ == "__main__":
    main()
