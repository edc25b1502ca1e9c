"""Real Inductor bug (not planted): torch.var_mean on an empty tensor.

Public report: https://github.com/pytorch/pytorch/issues/197108 (open).
Kind: NaN vs number. Eager returns (nan, nan) for the variance and mean of zero elements;
Inductor returns (nan, 0.): the mean comes from the reduction's initial value.
Reproduces on torch 2.13.0 (CPU).

User-style program: per-class feature statistics over a batch in which one class has no samples.
"""
import warnings

import torch

warnings.filterwarnings("ignore", message=".*degrees of freedom.*")


def class_stats(features, labels, cls: int):
    picked = features[labels == cls]
    var, mean = torch.var_mean(picked)
    return var, mean


def main():
    torch.manual_seed(0)
    features = torch.randn(8)
    labels = torch.tensor([0, 1, 0, 1, 0, 0, 1, 1])
    compiled = torch.compile(lambda f: torch.var_mean(f))
    out = []
    for cls in (0, 1, 2):  # class 2 has no samples: an empty tensor
        picked = features[labels == cls]
        var, mean = compiled(picked)
        out.append((var, mean))
        print(f"class {cls}: n={picked.numel()} var={var.item():.4f} mean={mean.item():.4f}")
    return out


if __name__ == "__main__":
    main()
