"""Control (user mistake in a custom op): the op writes into its input but declares it writes nothing.

Not from an issue. `mylib::normalize_rows` divides each row by its norm in place (`x.div_`) and
returns a copy, but is declared with `mutates_args=()`. The compiler trusts the declaration: it
computes `sigmoid(h)` inside the last kernel, after the op (nothing writes `h`, so it may), and
reads the overwritten rows, while eager computes it before the op. The compiled values differ from eager's, and the
compiler is not at fault: the op's schema is (torch.library.opcheck's test_schema says so).
Expected: minify exit 2, naming the op.
"""
import torch
import torch.nn as nn


@torch.library.custom_op("mylib::normalize_rows", mutates_args=())
def normalize_rows(x: torch.Tensor) -> torch.Tensor:
    x.div_(x.norm(dim=1, keepdim=True))  # wrong: writes its input, declared as writing nothing
    return x.clone()


@normalize_rows.register_fake
def _(x):
    return torch.empty_like(x)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)

    def forward(self, x):
        h = self.proj(x)
        gate = torch.sigmoid(h)  # read before the op: eager sees h as it was
        unit = normalize_rows(h)
        return unit * gate


torch.manual_seed(0)
model = Head().eval()
x = torch.randn(4, 8)
with torch.no_grad():
    eager = model(x)
    compiled = torch.compile(model)(x)
print("max difference from eager:", (compiled - eager).abs().max().item())
