"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: NaN for a number. A grouped, dilated, padded conv2d whose kernel holds a NaN (or an inf)
at a tap that only ever meets the zero padding: eager (and fp64) give NaN, since 0 * NaN is NaN;
Inductor's compiled convolution skips the padded taps and returns 4.0. A NaN in the weights,
the usual sign of a diverged training step, disappears from the output. Only with groups > 1
(groups=1 agrees). No public report found. Reproduces on torch 2.13.0 (CPU).
User-style program: a grouped conv layer whose weights were corrupted by a diverged update.
"""
import torch


class GroupedBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 2, 3, stride=(3, 2), padding=(2, 1), dilation=(4, 4), groups=2, bias=False)

    def forward(self, x):
        return self.conv(x)


def main():
    block = GroupedBlock()
    with torch.no_grad():
        block.conv.weight.fill_(1.0)
        block.conv.weight[0, 0, 0, 0] = float("nan")  # a diverged weight
        block.conv.weight[1, 0, 0, 0] = float("inf")
    x = torch.ones(1, 4, 7, 7)
    out = torch.compile(block)(x)
    print("output", out.flatten().tolist(), "has NaN:", bool(out.isnan().any()))
    return out


if __name__ == "__main__":
    main()
