"""Program shape: inference under `torch.no_grad()`: a classifier's confidence as the max of its
log-probabilities over classes.

Plant: C++ max reductions start from 0 instead of -inf (`plant("reduction:max:zero@cpp")`); the
log-probabilities are all negative, so the max comes out 0.
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op amax.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("reduction:max:zero@cpp")


class Confidence(nn.Module):
    def __init__(self, d=24, classes=10):
        super().__init__()
        self.fc = nn.Linear(d, classes)

    def forward(self, x):
        logp = torch.log_softmax(self.fc(x), dim=-1)
        return torch.amax(logp, dim=-1)


def main():
    torch.manual_seed(0)
    model = Confidence().eval()
    compiled = torch.compile(model)
    x = torch.randn(12, 24)
    with torch.no_grad():
        conf = compiled(x)
    print("confidence", [round(c, 4) for c in conf.exp().tolist()])
    return conf


if __name__ == "__main__":
    main()
