"""Program shape: a data-dependent branch (`if scores.mean() > 0:`) in the compiled function: a
graph break; graph 0 computes the scores, and the branch taken continues in graph 1.

Plant: the vectorized C++ exp throws a std::runtime_error
(`inject_bug("exp", "runtime_error", form="exception", paths=("cppvec",))`). Only the branch
taken (softplus-style, with exp) uses exp.
Expected answer: exit 0, a verified repro of Dynamo graph 1 (of 2), kind runtime_error, stage
inductor, culprit op exp.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("exp", "runtime_error", form="exception", paths=("cppvec",))


class Gate(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.score = nn.Linear(d, d)

    def forward(self, x):
        scores = self.score(x)
        if scores.mean() > 0:  # data-dependent: graph break
            return torch.log(1 + torch.exp(-scores.abs())) + scores.clamp(min=0)
        return scores * 0.5


def main():
    torch.manual_seed(0)
    model = Gate().eval()
    with torch.no_grad():
        model.score.bias.fill_(1.0)  # positive mean: the exp branch is taken
    compiled = torch.compile(model)
    x = torch.randn(8, 32)
    with torch.no_grad():
        y = compiled(x)
    print("out", round(y.sum().item(), 4))
    return y


if __name__ == "__main__":
    main()
