"""Real bug: copysign on a transposed input returns other strides than eager under torch.compile.

https://github.com/pytorch/pytorch/issues/198364 (open; also floor_divide, div(rounding_mode=
"floor"), addr(beta=0), put). Eager keeps the first input's layout (TensorIterator's rule):
strides (1, 5) for a (5, 6) transposed input; compiled returns contiguous strides (6, 1). The
values are equal. Reproduces on torch 2.13 CPU. minify: the layout rung.
"""
import torch


def signed_magnitude(a, b):
    return torch.copysign(a, b - 1.5)


def main():
    torch.manual_seed(0)
    a = torch.rand(6, 5).mT  # shape (5, 6), strides (1, 5)
    b = torch.rand(5, 6) + 1
    out = torch.compile(signed_magnitude)(a, b)
    print("compiled strides:", out.stride())


if __name__ == "__main__":
    main()
