"""Real Inductor bug (not planted): min(dim) on a bool tensor returns wrong indices on CPU.

Public report: https://github.com/pytorch/pytorch/issues/184893 (closed; CPU fix PRs #185157,
#185970). Kind: wrong value (indices). For a bool mask reduced over a dim of 9 or more elements,
eager's indices point at the first False; Inductor's point elsewhere (values agree).
Reproduces on torch 2.13.0 (CPU).

User-style program: bool-mask indexing to pick valid tokens, and `mask.min(dim)` with indices to
find, per column, the first padded row.
"""
import torch


def first_padding(scores, lengths):
    valid = torch.arange(scores.shape[0])[:, None] < lengths[None, :]  # (T, B) bool mask
    noisy = valid & (scores > -3.0)
    kept = scores[noisy]  # bool-mask indexing
    first_invalid = noisy.min(dim=0)  # values and indices
    return kept.sum(), first_invalid.values, first_invalid.indices


def main():
    torch.manual_seed(0)
    scores = torch.randn(12, 16)
    lengths = torch.randint(3, 12, (16,))
    compiled = torch.compile(first_padding)
    total, values, indices = compiled(scores, lengths)
    print("kept sum", round(total.item(), 4), "first padded row", indices.tolist())
    return total, values, indices


if __name__ == "__main__":
    main()
