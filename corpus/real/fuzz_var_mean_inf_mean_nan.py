"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: NaN for a number. `torch.var_mean` of data whose last element is +inf: the mean is +inf
in eager (and in fp64); Inductor's vectorized Welford reduction combines partial means as
inf - inf and returns NaN (the scalar C++ path is right: the blame search names the vectorized
path). The variance is NaN in both, as it should be. Eager's own Welford has the same weakness
when the inf comes earlier (then both say NaN): the Welford inf - inf collapse of #173885
(LayerNorm NaN with inf inputs; fix PR #173989 not merged). Reproduces on torch 2.13.0 (CPU).
User-style program: running statistics of sensor readings where one sensor saturated to inf.
"""
import torch


def stats(readings):
    var, mean = torch.var_mean(readings, True)
    return var, mean


def main():
    readings = torch.arange(25, dtype=torch.float32).reshape(5, 5) / 10
    readings[4, 4] = float("inf")  # the last sensor saturated
    var, mean = torch.compile(stats)(readings)
    print("var", var.item(), "mean", mean.item())
    return var, mean


if __name__ == "__main__":
    main()
