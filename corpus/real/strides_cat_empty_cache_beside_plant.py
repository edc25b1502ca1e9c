"""A real stride bug beside a planted one (run with `minify --inject relu:accuracy:double`).

A key cache that starts as a legacy 1-D empty tensor gets the new keys appended, transposed;
the values go through a relu gate, in the same graph. On torch 2.13 (CPU) the
compiled `cat` returns the transposed keys' own layout, strides (1, 6), where eager's cat
returns a contiguous tensor, strides (4, 1): a layout bug of cat's decomposition (it shows at
aot_eager_decomp_partition; the same class as pytorch#198364 and #183771), whatever is
planted. The relu plant is a second, separate bug: minify reports both (once, the real one's
layout difference at `cat` was taken for where the relu's wrong values start, and the two came
out as one repro holding cat and relu), says which one needs the plant, and writes the real
one's repro without it.
"""
import torch


def step(cache, keys, values):
    keys = torch.cat([cache, keys.transpose(0, 1)], dim=-2)  # keys arrive (d, t): stored transposed
    return keys, torch.relu(values) * 0.5


if __name__ == "__main__":
    torch.manual_seed(0)
    cache = torch.empty(0)
    keys, values = torch.randn(4, 6), torch.randn(6, 4)
    compiled, eager = torch.compile(step)(cache, keys, values), step(cache, keys, values)
    print("strides compiled", [o.stride() for o in compiled], "eager", [e.stride() for e in eager])
