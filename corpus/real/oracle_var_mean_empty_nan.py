"""Real bug: torch.var_mean on an empty tensor returns mean 0. instead of nan under torch.compile.

https://github.com/pytorch/pytorch/issues/197108 (open). Eager (and aot_eager) return
(nan, nan); Inductor returns (nan, 0.): the mean of zero elements comes from the reduction's
identity. Reproduces on torch 2.13 CPU. minify: the nan_inf rung (a number where eager has NaN).
"""
import torch


def batch_stats(scores):
    var, mean = torch.var_mean(scores)
    return var, mean


def main():
    empty_batch = torch.randn(0)
    var, mean = torch.compile(batch_stats)(empty_batch)
    print("compiled var", var.item(), "mean", mean.item())


if __name__ == "__main__":
    main()
