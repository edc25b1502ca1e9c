"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: wrong dtype. `torch.matmul` of a 4-D int32 tensor whose last two dims are transposed and a
1-D int32 vector is int32 in eager (and with the eager and aot_eager backends) but int64 under
Inductor (with a contiguous matrix it stays int32). Same class as #191308 (int8 batched matmul
-> int64, open). Reproduces on torch 2.13.0 (CPU).
User-style program: integer feature counts times integer weights, per batch and head.
"""
import torch


def weighted_counts(counts, weights):
    return torch.matmul(counts, weights)


def main():
    stored = torch.arange(2 * 3 * 5 * 4, dtype=torch.int32).reshape(2, 3, 5, 4) % 7  # (features, rows)
    counts = stored.transpose(-1, -2)  # (rows, features), not contiguous
    weights = torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32)
    out = torch.compile(weighted_counts)(counts, weights)
    print(out.dtype, out.shape)
    return out


if __name__ == "__main__":
    main()
