"""Gated MLP that calls its own custom op, `mylib::scale_rows`, defined here with
`torch.library.custom_op` and `register_fake`; the bug is planted in Inductor's handling of it.

`plant("lowering:mylib.scale_rows:accuracy:double")` (after the op is defined) wraps the
fallback kernel Inductor makes for the custom op so that its result is doubled: the op itself
is right in eager, Inductor's lowering of it is wrong. The graph's relu, sigmoid and layer norm
are untouched. minify must carry the op's definition (and only it, never main()) to its workers
and into repro.py, whose minimal graph calls torch.ops.mylib.scale_rows.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

EPS = 1e-6


def _row_norms(x):
    return x.norm(dim=-1, keepdim=True).clamp_min(EPS)


@torch.library.custom_op("mylib::scale_rows", mutates_args=())
def scale_rows(x: torch.Tensor, target: float) -> torch.Tensor:
    """Rescale each row to norm `target`."""
    return x * (target / _row_norms(x))


@scale_rows.register_fake
def _(x, target):
    return torch.empty_like(x)


plant("lowering:mylib.scale_rows:accuracy:double")


class GatedBlock(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        a, b = self.up(self.norm(x)).chunk(2, dim=-1)
        h = torch.relu(a) * torch.sigmoid(b)
        h = torch.ops.mylib.scale_rows(h, 4.0)
        return x + self.down(h)


class Model(nn.Module):
    def __init__(self, dim=32, classes=6):
        super().__init__()
        self.embed = nn.Linear(12, dim)
        self.block = GatedBlock(dim)
        self.out_norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, features):
        x = self.block(F.gelu(self.embed(features)))
        return F.log_softmax(self.head(self.out_norm(torch.tanh(x) + x)), dim=-1)


def main():
    torch.manual_seed(0)
    model = Model().eval()
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(torch.randn(16, 12))
    print("predicted classes:", out.argmax(dim=-1).tolist())


if __name__ == "__main__":
    main()
