"""Training step of a tanh MLP whose tanh_backward decomposition is wrong (backward-only bug).

aten.tanh_backward (grad * (1 - y*y)) only appears in the backward graph. The planted
decomposition doubles it, so the loss is right and every gradient upstream of a tanh is
wrong; the bug shows from the `aot_eager_decomp_partition` stage on. minify checks forward
graphs only, so this case documents a known blind spot (tag `backward`).
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("decomposition:tanh_backward:accuracy:double")


class TanhMLP(nn.Module):
    def __init__(self, features=8, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, 1)

    def forward(self, x, target):
        h = torch.tanh(self.fc1(x))
        h = torch.tanh(self.fc2(self.norm(h))) + h
        pred = self.fc3(h).squeeze(-1)
        return ((pred - target) ** 2).mean()


def main():
    torch.manual_seed(0)
    model = TanhMLP()
    x, target = torch.randn(48, 8), torch.randn(48)
    compiled = torch.compile(model)
    loss = compiled(x, target)
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    print("loss:", float(loss), "fc1 grad norm:", float(model.fc1.weight.grad.norm()))
    return loss.detach(), grads


if __name__ == "__main__":
    main()
