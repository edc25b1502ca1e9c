"""MobileNet-style conv net whose hardswish decomposition raises while tracing.

Inductor's decomposition table has a broken entry for aten.hardswish: tracing the graph
with Inductor's decompositions raises, so `aot_eager_decomp_partition` fails to compile just
like Inductor, and `aot_eager` compiles and runs fine.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("decomposition:hardswish:compile_error")


class MobileBlock(nn.Module):
    def __init__(self, ch, expand=2):
        super().__init__()
        self.expand = nn.Conv2d(ch, ch * expand, 1)
        self.bn1 = nn.BatchNorm2d(ch * expand)
        self.depthwise = nn.Conv2d(ch * expand, ch * expand, 3, padding=1, groups=ch * expand)
        self.bn2 = nn.BatchNorm2d(ch * expand)
        self.project = nn.Conv2d(ch * expand, ch, 1)

    def forward(self, x):
        h = F.relu6(self.bn1(self.expand(x)))
        h = F.hardswish(self.bn2(self.depthwise(h)))
        return x + self.project(h)


class MobileNetTiny(nn.Module):
    def __init__(self, ch=16, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, stride=2, padding=1)
        self.block1 = MobileBlock(ch)
        self.block2 = MobileBlock(ch)
        self.head = nn.Linear(ch, classes)

    def forward(self, img):
        h = self.block2(self.block1(F.relu(self.stem(img))))
        return self.head(h.mean(dim=(2, 3)))


def main():
    torch.manual_seed(0)
    model = MobileNetTiny().eval()
    img = torch.randn(2, 3, 32, 32)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(img)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
