"""Program shape: CPU autocast to bfloat16 (`torch.autocast("cpu", dtype=torch.bfloat16)`) around a
compiled gated MLP classifier.

Plant: Inductor's lowering of aten.sigmoid adds one (`plant("lowering:sigmoid:accuracy:add_one")`).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op sigmoid.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:sigmoid:accuracy:add_one")


class GatedClassifier(nn.Module):
    def __init__(self, d=32, hidden=64, classes=5):
        super().__init__()
        self.value = nn.Linear(d, hidden)
        self.gate = nn.Linear(d, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.value(x) * torch.sigmoid(self.gate(x)))


def main():
    torch.manual_seed(0)
    model = GatedClassifier().eval()
    compiled = torch.compile(model)
    x = torch.randn(16, 32)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        logits = compiled(x)
    print("dtype", logits.dtype, "pred", logits.argmax(-1).tolist())
    return logits


if __name__ == "__main__":
    main()
