"""Real Inductor bug (not planted): cat of a repeated channels_last input returns contiguous strides.

Found by fuzzing (eager vs inductor strides over channels_last inputs). Related public reports:
https://github.com/pytorch/pytorch/pull/157380 ("Fix memory layout for concatenation of repeated
input", the cat optimization of PR #132081 is inconsistent with eager) and issues #121613 / #118082
(Concat layout vs channels_last). Kind: strides. Eager keeps channels_last, strides
(384, 1, 64, 8); Inductor returns contiguous strides (384, 48, 8, 1); values are equal.
Reproduces on torch 2.13.0 (CPU).

User-style program: DenseNet-style feature concatenation of a channels_last map with itself.
"""
import torch


def dense_concat(x):
    return torch.cat([x, x], dim=1)


def main():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 8).contiguous(memory_format=torch.channels_last)
    out = torch.compile(dense_concat)(x)
    print("concat", tuple(out.shape), "strides", out.stride(),
          "channels_last", out.is_contiguous(memory_format=torch.channels_last))
    return out


if __name__ == "__main__":
    main()
