"""Highway network; C++ kernels fail to compile only where tanh feeds mul in one kernel.

The planted bug prints `mul` as `compile error!` only when one operand was computed by tanh
in the same kernel. Each highway layer computes t * tanh(h) + (1 - t) * x in one fused
kernel, so compiling the model fails; a graph without that fusion compiles fine.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("fusion:tanh+mul:compile_error@cpp,cppvec")


class Highway(nn.Module):
    def __init__(self, dim=32, layers=3):
        super().__init__()
        self.hs = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.ts = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.norm(x)
        for h_layer, t_layer in zip(self.hs, self.ts):
            t = torch.sigmoid(t_layer(x))
            x = t * torch.tanh(h_layer(x)) + (1 - t) * x
        return self.out(x)


def main():
    torch.manual_seed(0)
    model = Highway().eval()
    x = torch.randn(16, 32)
    compiled = torch.compile(model)
    with torch.no_grad():
        y = compiled(x)
    print("y[0]:", y[0])


if __name__ == "__main__":
    main()
