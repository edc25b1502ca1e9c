"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: wrong values (indices). `F.max_pool3d(x, 3, stride=2, ceil_mode=True, return_indices=True)`
on an input whose spatial dims are not laid out row-major (here a permuted volume): the pooled
values are right, but compiled indices do not point at the maxima (`x.flatten(2).gather(2, idx)`
differs from the pooled values), so `max_unpool3d` and the backward put values in the wrong
places. With a contiguous copy of the same input the indices are right. Public report #197434
(fixed upstream by PR #197596 after 2.13). Reproduces on torch 2.13.0 (CPU).
User-style program: pooling a volume read in (W, H, D) order and permuted to (D, H, W).
"""
import torch
import torch.nn.functional as F


def pool_with_indices(volume):
    return F.max_pool3d(volume, kernel_size=3, stride=2, ceil_mode=True, return_indices=True)


def main():
    torch.manual_seed(0)
    raw = torch.randn(1, 2, 5, 6, 3)  # stored (W, H, D)
    volume = raw.permute(0, 1, 4, 3, 2)  # viewed (D, H, W): not contiguous
    values, indices = torch.compile(pool_with_indices)(volume)
    found = volume.flatten(2).gather(2, indices.flatten(2)).reshape(values.shape)
    print("indices point at the maxima:", torch.equal(found, values))
    return values, indices


if __name__ == "__main__":
    main()
