"""torch.compile loses an append to a class attribute made before a graph break.

Public report: https://github.com/pytorch/pytorch/issues/192872 (open, 2026). With
`enable_trace_load_build_class` on, a class defined inside the compiled function has no source;
the append to its class-level list made before `torch._dynamo.graph_break()` is dropped, only the
second survives: the result is off by exactly one (len 1 instead of 2). Every backend, `eager`
included. torch 2.13.0, CPU.
"""
import torch
import torch._dynamo

torch._dynamo.config.enable_trace_load_build_class = True


def fn(t):
    class Holder:
        items = []

    Holder.items.append(1)
    y = t * 2
    torch._dynamo.graph_break()
    Holder.items.append(2)
    z = y * 3
    return z.sum() + len(Holder.items)


torch.manual_seed(0)
t = torch.randn(3)
expected = fn(t)
out = torch.compile(fn)(t)
print("compiled", out.item(), "eager", expected.item())
torch.testing.assert_close(out, expected)
