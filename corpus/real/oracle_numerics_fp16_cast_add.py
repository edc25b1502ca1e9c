"""Numerics, not a bug: float16 casts before an add give other bits compiled than eager.

https://github.com/pytorch/pytorch/issues/182131 (closed: intended Inductor behaviour, see also
#183761). Inductor keeps the fused `z.to(float16) + x.to(float16)` in float32 and rounds once,
eager rounds each cast and the add: y differs by one float16 ulp at some elements (0.000977) and
the sum is 20.6000 compiled, 20.5996 eager. With `emulate_precision_casts` the bits match.
The script, like the report, demands bitwise equality; every compiled graph passes the oracle.
minify: the numerics verdict (exit 5) with the emulate_precision_casts hint verified.
"""
import torch


def f(x, c):
    z = torch.where(c, torch.full_like(x, 0.5), torch.full_like(x, -0.5))
    y = z.to(torch.float16) + x.to(torch.float16)
    return y, y.float().sum()


def main():
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 10
    c = (torch.arange(24) % 5 == 0).reshape(2, 3, 4)
    eager = f(x, c)
    compiled = torch.compile(f, fullgraph=True)(x, c)
    print("eager sum:", eager[1].item(), "compiled sum:", compiled[1].item())
    torch.testing.assert_close(compiled[0], eager[0], rtol=0, atol=0)
    torch.testing.assert_close(compiled[1], eager[1], rtol=0, atol=0)


if __name__ == "__main__":
    main()
