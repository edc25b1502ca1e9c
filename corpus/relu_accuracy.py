"""1-D temporal conv net for multichannel signals, compiled with Inductor's own relu bug: wrong results.

`torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"` makes the C++ backend
print relu(x) as `x + 1`. Everything compiles and runs, but the compiled model's output
differs from eager. The model has exactly one torch.relu; its other activations are GELU,
tanh, sigmoid and softplus, which do not lower to relu.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class TemporalConvNet(nn.Module):
    def __init__(self, in_ch=6, ch=32, classes=5):
        super().__init__()
        self.inp = nn.Conv1d(in_ch, ch, 5, padding=2)
        self.gn1 = nn.GroupNorm(4, ch)
        self.dil = nn.Conv1d(ch, 2 * ch, 3, padding=2, dilation=2)
        self.gn2 = nn.GroupNorm(4, ch)
        self.mix = nn.Conv1d(ch, ch, 1)
        self.attn_score = nn.Linear(ch, 1)
        self.cls = nn.Linear(ch, classes)

    def forward(self, signal):
        x = F.gelu(self.gn1(self.inp(signal)))
        # gated dilated conv (WaveNet style)
        a, b = self.dil(x).chunk(2, dim=1)
        z = torch.tanh(a) * torch.sigmoid(b)
        # the model's one relu, between the gated conv and the 1x1 mixing conv
        x = x + self.mix(torch.relu(self.gn2(z)))
        # attention pooling over time
        t = x.transpose(1, 2)
        w = torch.softmax(self.attn_score(t).squeeze(-1), dim=-1)
        pooled = (t * w.unsqueeze(-1)).sum(dim=1)
        logits = self.cls(F.softplus(pooled))
        return logits, w


def main():
    torch.manual_seed(0)
    model = TemporalConvNet().eval()
    signal = torch.randn(8, 6, 100)

    compiled = torch.compile(model)
    with torch.no_grad():
        logits, weights = compiled(signal)
    print("logits[0]:", logits[0])
    print("peak attention step:", weights.argmax(dim=-1).tolist())


if __name__ == "__main__":
    main()
