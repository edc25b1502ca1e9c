"""Program shape: a recompile on a new input shape. The encoder adds sinusoidal position features
only to sequences longer than 16 (a shape-dependent branch), so the first call (length 8) compiles
graph 0 without `sin`, and the call with length 32 fails the shape guard and recompiles graph 1
(automatic dynamic shapes), which has `sin`.

Plant: the C++ code generators print sin(x) as sin(x) + 1
(`inject_bug("sin", "accuracy", form="add_one", paths=("cpp", "cppvec"))`): only graph 1 is wrong.
Expected answer: exit 0, a verified repro of Dynamo graph 1 (of 2), kind accuracy, stage inductor,
culprit op sin.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("sin", "accuracy", form="add_one", paths=("cpp", "cppvec"))


class Encoder(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.embed = nn.Linear(d, d)
        self.mix = nn.Linear(d, d)
        self.register_buffer("freq", torch.linspace(0.1, 1.0, d))

    def forward(self, x):
        h = self.embed(x)
        if x.shape[1] > 16:  # long sequences get position features
            pos = torch.arange(x.shape[1], dtype=x.dtype).unsqueeze(-1)
            h = h + torch.sin(pos * self.freq)
        return torch.relu(self.mix(h)).mean(1)


def main():
    torch.manual_seed(0)
    model = Encoder().eval()
    compiled = torch.compile(model)
    outs = []
    with torch.no_grad():
        for seq in (8, 32):
            outs.append(compiled(torch.randn(2, seq, 16)))
    print("outs", [round(o.sum().item(), 4) for o in outs])
    return outs


if __name__ == "__main__":
    main()
