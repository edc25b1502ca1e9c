"""Numerics, not a bug: the sign of the NaN that sqrt of a negative number gives.

https://github.com/pytorch/pytorch/issues/189808 (open). Eager's sqrt(-1.0) is the NaN
0x7fc00000, Inductor's C++ kernel gives 0xffc00000 (sign bit set). Both are NaN: no finite
value differs, and the oracle holds NaN equal to NaN whatever its sign. The script checks the
bits, as the report does. minify: the numerics verdict (exit 5), "only in the sign of a NaN".
"""
import torch


def scaled_root(x):
    return torch.sqrt(x) * 2


def main():
    x = torch.tensor([-1.0, 4.0, -9.0, 16.0])
    eager = scaled_root(x)
    compiled = torch.compile(scaled_root)(x)
    print("eager bits:", eager.view(torch.int32).tolist(), "compiled bits:", compiled.view(torch.int32).tolist())
    assert torch.equal(eager.view(torch.int32), compiled.view(torch.int32)), "NaN bit patterns differ"


if __name__ == "__main__":
    main()
