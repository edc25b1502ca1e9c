"""Control (user mistake in a custom op): the op's fake says it keeps the input's shape; it does not.

Not from an issue. `mylib::row_energy` sums the squares of each row, a (B, D) -> (B,) op, but
its `register_fake` returns a (B, D) tensor. Eager never runs the fake and is right; compiled,
Dynamo and Inductor trust the fake, and the compiled code's own check of the op's output
(`assert_size_stride`) raises. The compiler is not at fault: the op's definition is.
Expected: minify exit 2, naming the op's fake.
"""
import torch
import torch.nn as nn


@torch.library.custom_op("mylib::row_energy", mutates_args=())
def row_energy(x: torch.Tensor) -> torch.Tensor:
    return (x * x).sum(dim=1)


@row_energy.register_fake
def _(x):
    return torch.empty_like(x)  # wrong: the op drops dim 1


class EnergyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)

    def forward(self, x):
        return torch.ops.mylib.row_energy(torch.tanh(self.proj(x))) * 0.5


model = torch.compile(EnergyHead().eval())
with torch.no_grad():
    print(model(torch.randn(4, 8)))
