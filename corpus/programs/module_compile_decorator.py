# Foreign program: the two other ways the torch.compile docs show to compile: `model.compile()`
# (nn.Module.compile, in place) and the `@torch.compile` decorator on a helper function. Modelled on
# the "Introduction to torch.compile" tutorial. Expected: nothing fails.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualMLP(nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.fc2(F.silu(self.fc1(x))))


@torch.compile
def rms_score(a, b):
    diff = a - b
    return torch.sqrt((diff * diff).mean(-1) + 1e-6).cos() + torch.sin(a).sum(-1)


def main():
    torch.manual_seed(0)
    model = ResidualMLP().eval()
    model.compile()
    x = torch.randn(4, 24)
    with torch.no_grad():
        y = model(x)
        s = rms_score(y, x)
    print("score", [round(v, 4) for v in s.tolist()])
    return y, s


if __name__ == "__main__":
    main()
