"""Log-magnitude spectrogram front end; a scalar C++ kernel aborts the process in log1p.

The front end keeps every second frequency bin (`spec[..., ::2]`, a strided view) and
compresses it with log1p(|x|). Inductor prints that kernel with the scalar C++ code
generator (`cpp`) and runs it in an OpenMP parallel loop; the planted bug makes log1p execute
`throw 1`, which cannot leave the parallel region, so the C++ runtime calls std::terminate and
the process dies with SIGABRT: no Python traceback.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("log1p", "runtime_error", paths=("cpp",))


class SpectrogramTagger(nn.Module):
    def __init__(self, bins=128, ch=32, tags=10):
        super().__init__()
        self.conv1 = nn.Conv1d(bins // 2, ch, 3, padding=1)
        self.norm1 = nn.GroupNorm(4, ch)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=1)
        self.norm2 = nn.GroupNorm(4, ch)
        self.fc = nn.Linear(2 * ch, ch)
        self.ln = nn.LayerNorm(ch)
        self.out = nn.Linear(ch, tags)

    def forward(self, spec):  # spec: (batch, frames, bins)
        mag = torch.log1p(spec[..., ::2].abs())  # strided view: a scalar kernel
        h = F.gelu(self.norm1(self.conv1(mag.transpose(1, 2))))
        h = h + F.gelu(self.norm2(self.conv2(h)))
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=-1)
        h = torch.tanh(self.ln(self.fc(pooled)))
        return torch.sigmoid(self.out(h))


def main():
    torch.manual_seed(0)
    model = SpectrogramTagger().eval()
    spec = torch.randn(16, 400, 128)
    compiled = torch.compile(model)
    with torch.no_grad():
        tags = compiled(spec)
    print("tag probabilities[0]:", tags[0])


if __name__ == "__main__":
    main()
