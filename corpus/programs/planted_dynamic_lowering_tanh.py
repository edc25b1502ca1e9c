"""Program shape: `torch.compile(model, dynamic=True)`, called with batches of 8 and 13 rows.

Plant: Inductor's lowering of aten.tanh builds -tanh(x) (`plant("lowering:tanh:accuracy:negate")`),
in the one dynamic-shape graph that serves both batch sizes.
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op tanh.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:tanh:accuracy:negate")


class ValueHead(nn.Module):
    def __init__(self, d=24, hidden=48):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = torch.relu(self.fc2(h)) + h
        return self.out(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = ValueHead().eval()
    compiled = torch.compile(model, dynamic=True)
    values = []
    with torch.no_grad():
        for batch in (8, 13):
            values.append(compiled(torch.randn(batch, 24)))
    print("values", [round(v.sum().item(), 4) for v in values])
    return values


if __name__ == "__main__":
    main()
