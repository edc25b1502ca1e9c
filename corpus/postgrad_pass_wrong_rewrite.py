"""Small gated MLP; a custom post-grad pass rewrites every aten.mul into aten.add.

The bug lives in a graph pass, not in Inductor's code generation: the script installs the
pass through `torch._inductor.config.post_grad_custom_post_pass`, so Inductor runs it on the
post-grad graph before lowering. The gate `h * sigmoid(g)` becomes `h + sigmoid(g)`, so the
compiled outputs differ from eager; `aot_eager_decomp_partition` never runs post-grad passes
and is right. Inductor's CompilerBisector (or `minify bisect`) names the pass:
`post_grad_passes: post_grad_custom_post_pass`.

`plant_mul_to_add_pass` is self-contained (imports only torch) so a repro can carry it.
"""
import torch
import torch.nn as nn


def plant_mul_to_add_pass():
    """Install the wrong post-grad pass for the rest of the process; returns undo."""
    import torch
    import torch._inductor.config

    aten = torch.ops.aten

    def mul_to_add(graph):
        for node in graph.find_nodes(op="call_function", target=aten.mul.Tensor):
            node.target = aten.add.Tensor

    before = torch._inductor.config.post_grad_custom_post_pass
    torch._inductor.config.post_grad_custom_post_pass = mul_to_add

    def undo():
        torch._inductor.config.post_grad_custom_post_pass = before

    return undo


plant_mul_to_add_pass()


class GatedMLP(nn.Module):
    def __init__(self, features=16, hidden=32, classes=4):
        super().__init__()
        self.up = nn.Linear(features, hidden)
        self.gate = nn.Linear(features, hidden)
        self.down = nn.Linear(hidden, classes)

    def forward(self, x):
        h = torch.relu(self.up(x)) * torch.sigmoid(self.gate(x))
        return self.down(h)


def main():
    torch.manual_seed(0)
    model = GatedMLP().eval()
    x = torch.randn(8, 16)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(x)
    print("logits[0]:", logits[0])
    return logits


if __name__ == "__main__":
    main()
