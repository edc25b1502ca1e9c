"""Program shape: `model.compile()` (nn.Module.compile, in place) on a Poisson regression model.

Plant: Inductor's lowering of aten.exp raises (`plant("lowering:exp:compile_error")`), so the
graph fails while Inductor lowers it (LoweringException).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind compile_error, stage
inductor, culprit op exp.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:exp:compile_error")


class PoissonRegressor(nn.Module):
    def __init__(self, d=20, hidden=40):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        log_rate = self.fc2(torch.relu(self.fc1(x))).squeeze(-1)
        return torch.exp(log_rate.clamp(max=10.0))


def main():
    torch.manual_seed(0)
    model = PoissonRegressor().eval()
    model.compile()
    x = torch.randn(12, 20)
    with torch.no_grad():
        rate = model(x)
    print("rate", round(rate.sum().item(), 4))
    return rate


if __name__ == "__main__":
    main()
