"""Image-statistics model on uint8 pixels, with a planted C++ codegen bug in `neg`.

Inductor's C++ backend is made to print neg(x) as `decltype(x)(2 * x)`, i.e. 2*x instead of
-x (for uint8: (2*x) mod 256 instead of (256-x) mod 256). The pixel branch
`neg -> maximum -> cat` therefore produces wrong pixels, and everything computed from them
(integer histograms, the float features fed to the small MLP head) is wrong too.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("neg", template="decltype({x})(2 * {x})", paths=("cpp", "cppvec"))


class PixelStatsNet(nn.Module):
    """Clamps a flat uint8 image from below, summarizes it and scores it with an MLP head."""

    def __init__(self, feat_dim=16, hidden=32):
        super().__init__()
        self.embed = nn.Linear(feat_dim + 4, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, 4)

    def forward(self, level, pixels, feats):
        # uint8 pixel branch: floor every pixel at (-level) mod 256
        a = torch.neg(level)
        b = torch.maximum(pixels, a)
        y = torch.cat([b])

        # integer statistics of the clamped image
        dark = (y < 64).sum()
        bright = (y >= 192).sum()
        centered = y.to(torch.int32) - 128
        energy = (centered * centered).sum()

        # float statistics
        scaled = y.to(torch.float32) / 255.0
        mean = scaled.mean()
        std = scaled.std()
        stats = torch.stack([mean, std, dark.float() / y.numel(), bright.float() / y.numel()])

        # MLP head on per-sample features plus the image statistics
        x = torch.cat([feats, stats.expand(feats.shape[0], 4)], dim=1)
        h = F.gelu(self.norm(self.embed(x)))
        scores = torch.softmax(self.head(h), dim=-1)
        return y, energy, scores


def main():
    torch.manual_seed(0)
    model = PixelStatsNet().eval()
    level = torch.randint(256, (1,), dtype=torch.uint8)
    pixels = torch.randint(256, (8390,), dtype=torch.uint8)
    feats = torch.randn(4, 16)

    compiled = torch.compile(model)
    with torch.no_grad():
        y, energy, scores = compiled(level, pixels, feats)
    print("pixels:", y[:8].tolist(), "energy:", int(energy))
    print("scores:", scores[0])


if __name__ == "__main__":
    main()
