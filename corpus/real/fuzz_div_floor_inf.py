"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: NaN/Inf pattern. `torch.div(x, 0.5, rounding_mode="floor")` where x is +-inf: eager gives
NaN, as its documentation promises ("equivalent to floor division in Python": `inf // 0.5` is
nan in Python and NumPy); Inductor computes floor(x / 0.5) = +-inf. The CUDA side is #188048,
which maintainers fixed to match eager (PR #188049); the CPU lowering still differs (float16
and float32 alike). Reproduces on torch 2.13.0 (CPU).
User-style program: bucketing values into half-unit bins, where overflowed values are inf.
"""
import torch


def bins(values):
    return torch.div(values, 0.5, rounding_mode="floor")


def main():
    values = torch.tensor([1.2, float("inf"), -3.7, float("-inf")], dtype=torch.float16)
    out = torch.compile(bins)(values)
    print(out.tolist())
    return out


if __name__ == "__main__":
    main()
