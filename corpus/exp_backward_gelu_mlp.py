"""Training step of a GELU MLP; the bug is in exp, which only the backward graph computes.

The forward pass uses exact GELU (computed through erf) and nothing that calls exp. The
derivative of GELU contains the Gaussian density exp(-x*x/2), so exp appears only in the
backward graph AOTAutograd builds; the planted bug adds one to it in C++ kernels. The loss
is right; the gradients and the weights after an SGD step are wrong (tag `backward`).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("exp", "accuracy", form="add_one", paths=("cpp", "cppvec"))


class GeluRegressor(nn.Module):
    def __init__(self, features=10, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, hidden)
        self.norm3 = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, target):
        h = F.gelu(self.norm1(self.fc1(x)))
        h = h + F.gelu(self.norm2(self.fc2(h)))
        h = h + F.gelu(self.norm3(self.fc3(h)))
        pred = self.out(h).squeeze(-1)
        return F.smooth_l1_loss(pred, target)


def main():
    torch.manual_seed(0)
    model = GeluRegressor()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = torch.randn(64, 10), torch.randn(64)
    compiled = torch.compile(model)
    loss = compiled(x, target)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    opt.step()
    print("loss:", loss.item(), "fc1 grad norm:", model.fc1.weight.grad.norm().item())
    return loss.detach(), grads


if __name__ == "__main__":
    main()
