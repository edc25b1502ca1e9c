"""Program shape: BatchNorm2d in train mode inside the compiled forward: batch statistics are
used and the running_mean / running_var buffers are mutated by the compiled graph.

Plant: the C++ code generators print rsqrt(x) as 2 * rsqrt(x)
(`inject_bug("rsqrt", "accuracy", form="double", paths=("cpp", "cppvec"))`); Inductor's
decomposition of batch norm normalizes with rsqrt(var + eps), so the normalized activations are
doubled (the running buffers, computed without rsqrt, stay right).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op batch_norm.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("rsqrt", "accuracy", form="double", paths=("cpp", "cppvec"))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(h.mean((2, 3)))


def main():
    torch.manual_seed(0)
    model = SmallCNN().train()
    compiled = torch.compile(model)
    x = torch.randn(8, 3, 8, 8)
    with torch.no_grad():
        logits = compiled(x)
    print("logits", round(logits.sum().item(), 4), "running_var", round(model.bn.running_var.sum().item(), 4))
    return logits, model.bn.running_mean.clone(), model.bn.running_var.clone()


if __name__ == "__main__":
    main()
