"""Real Inductor bug (not planted): index_select on a channels_last input changes the output layout.

Found by fuzzing (one op over channels_last/transposed/sliced inputs, eager vs inductor strides);
public report of the same behaviour: https://github.com/pytorch/pytorch/issues/168381 (open,
"torch.compile / Inductor changes torch.index_select output layout from contiguous (eager) to
non-contiguous"). Kind: strides. Eager returns a contiguous (2, 2, 6, 8) tensor, strides
(96, 48, 8, 1); Inductor returns channels_last strides (96, 1, 16, 2). Values are equal, but
`out.view(2, -1)` works on eager's result and raises on the compiled one.
Reproduces on torch 2.13.0 (CPU).

User-style program: pick two channels of a channels_last feature map.
"""
import torch


def pick_channels(feats, idx):
    return torch.index_select(feats, 1, idx)


def main():
    torch.manual_seed(0)
    feats = torch.randn(2, 4, 6, 8).contiguous(memory_format=torch.channels_last)
    idx = torch.tensor([0, 2])
    out = torch.compile(pick_channels)(feats, idx)
    print("picked", tuple(out.shape), "strides", out.stride(), "contiguous", out.is_contiguous())
    return out


if __name__ == "__main__":
    main()
