"""Poisson count regression; a vectorized C++ kernel throws while computing exp.

The planted bug makes the vectorized C++ code for exp throw a C++ `std::runtime_error`
("injected runtime error"). Inductor's kernel bindings turn it into a Python RuntimeError
when the compiled model runs: the kernel compiles fine and fails only at run time.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("exp", "runtime_error", form="exception", paths=("cppvec",))


class CountModel(nn.Module):
    def __init__(self, features=20, hidden=48):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.rate = nn.Linear(hidden, 1)
        self.dispersion = nn.Linear(hidden, 1)

    def forward(self, x, exposure):
        h = F.gelu(self.norm(self.fc1(x)))
        h = h + torch.tanh(self.fc2(h))
        log_rate = self.rate(h).squeeze(-1) + torch.log(exposure)
        rate = torch.exp(log_rate.clamp(max=20.0))  # the model's one exp
        alpha = torch.sigmoid(self.dispersion(h).squeeze(-1)) * 2 + 1e-4
        variance = rate + alpha * rate * rate
        return rate, variance


def main():
    torch.manual_seed(0)
    model = CountModel().eval()
    x = torch.randn(64, 20)
    exposure = torch.rand(64) * 3 + 0.5
    compiled = torch.compile(model)
    with torch.no_grad():
        rate, variance = compiled(x, exposure)
    print("expected counts:", rate[:4])


if __name__ == "__main__":
    main()
