"""Survival model (exponential hazards); Inductor cannot lower aten.exp and raises.

The planted bug makes the lowering of aten.exp raise, so compiling the graph fails with a
LoweringException (a compile error) on any device, while aot_eager and the decomposition
stage (which never lower) run fine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("lowering:exp:compile_error")


class HazardModel(nn.Module):
    def __init__(self, features=14, hidden=32, horizons=5):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, hidden)
        self.log_hazard = nn.Linear(hidden, horizons)
        self.register_buffer("widths", torch.tensor([1.0, 2.0, 3.0, 6.0, 12.0]))

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = h + torch.tanh(self.fc2(h))
        h = h + F.gelu(self.fc3(self.norm2(h)))
        cumulative = (torch.exp(self.log_hazard(h)) * self.widths).cumsum(-1)
        survival = torch.clamp(1.0 - cumulative / (1.0 + cumulative), min=0.0)
        return survival, cumulative


def main():
    torch.manual_seed(0)
    model = HazardModel().eval()
    x = torch.randn(32, 14)
    compiled = torch.compile(model)
    with torch.no_grad():
        survival, _ = compiled(x)
    print("survival[0]:", survival[0])


if __name__ == "__main__":
    main()
