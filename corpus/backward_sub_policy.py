"""Policy-gradient training of a gated MLP, with a planted C++ codegen bug in `sub`.

The compiled policy network's forward uses linear, tanh, sigmoid, silu and adds, and no
subtraction; its backward does (tanh' = 1 - y*y, sigmoid' = y*(1 - y), silu'), so the C++
backend printing `a - b` as `a - b + 1` only miscompiles the backward graph AOTAutograd
hands to Inductor at the first `loss.backward()`. The forward matches eager; the gradients,
and so the weights after each optimizer step, do not. The loss is computed eagerly.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sub", form="add_one", paths=("cpp", "cppvec"))


class GatedPolicy(nn.Module):
    def __init__(self, obs=12, hidden=32, actions=4):
        super().__init__()
        self.inp = nn.Linear(obs, hidden)
        self.gate = nn.Linear(obs, hidden)
        self.h1 = nn.Linear(hidden, hidden)
        self.h2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, actions)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs):
        x = torch.tanh(self.inp(obs)) * torch.sigmoid(self.gate(obs))
        x = x + torch.tanh(self.h1(x))
        x = x + F.silu(self.h2(x))
        probs = torch.sigmoid(self.head(x))
        value = self.value(x).squeeze(-1)
        return probs, value


def main():
    torch.manual_seed(0)
    policy = GatedPolicy()
    opt = torch.optim.SGD(policy.parameters(), lr=0.05)
    compiled = torch.compile(policy)
    for step in range(3):
        obs = torch.randn(64, 12)
        actions = torch.randint(4, (64,))
        returns = torch.randn(64)
        probs, value = compiled(obs)
        taken = probs.gather(1, actions[:, None]).squeeze(1)
        advantage = (returns - value).detach()
        loss = -(torch.log(taken) * advantage).mean() + 0.5 * (value - returns).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("final loss:", float(loss))
    return [p.detach().clone() for p in policy.parameters()]


if __name__ == "__main__":
    main()
