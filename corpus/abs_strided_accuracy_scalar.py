"""Stereo audio feature extractor; the scalar C++ code prints abs(x) as -abs(x).

The left channel is every even sample and the right every odd one (`wave[:, 0::2]`,
`wave[:, 1::2]`: strided views), so their envelope kernels are printed by the scalar C++
code generator (`cpp`), where the planted bug negates abs. The features, and the
classifier fed by them, differ from eager.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("abs", "accuracy", form="negate", paths=("cpp",))


class StereoFeatures(nn.Module):
    def __init__(self, frames=25, hidden=32, classes=6):
        super().__init__()
        self.frames = frames
        self.fc1 = nn.Linear(2 * frames + 2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, wave):
        left, right = wave[:, 0::2], wave[:, 1::2]
        env_l = torch.abs(left).reshape(wave.shape[0], self.frames, -1).mean(-1)
        env_r = torch.abs(right).reshape(wave.shape[0], self.frames, -1).mean(-1)
        balance = (env_l.sum(-1, keepdim=True) - env_r.sum(-1, keepdim=True)) / self.frames
        energy = (left * left + right * right).mean(-1, keepdim=True)
        feats = torch.cat([env_l, env_r, balance, energy.sqrt()], dim=-1)
        h = F.gelu(self.norm(self.fc1(feats)))
        return self.fc2(h), feats


def main():
    torch.manual_seed(0)
    model = StereoFeatures().eval()
    wave = torch.randn(4, 2000)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits, feats = compiled(wave)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
