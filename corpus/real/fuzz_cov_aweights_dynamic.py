"""Real torch.compile bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: compile error where eager runs. `torch.cov(x, aweights=w)` (or `fweights=`) under
`torch.compile(dynamic=True)` raises `TorchRuntimeError: RuntimeError when making fake tensor
call` ("Cannot call numel() on tensor with symbolic sizes/strides"), with every backend,
`eager` included: cov's C++ implementation calls numel() on the weights. The same class as
#181870 (cross_entropy with class weights) and #163759 (combinations), both fixed one op at a
time; no report for cov found. Reproduces on torch 2.13.0 (CPU).
User-style program: a weighted covariance of features per batch, batches of varying size.
"""
import torch


def weighted_cov(features, weights):
    return torch.cov(features.T, aweights=weights)


def main():
    torch.manual_seed(0)
    compiled = torch.compile(weighted_cov, dynamic=True)
    out = None
    for n in (6, 9):
        features, weights = torch.randn(n, 3), torch.rand(n)
        out = compiled(features, weights)
        print(f"batch of {n}: cov trace {out.trace().item():.4f}")
    return out


if __name__ == "__main__":
    main()
