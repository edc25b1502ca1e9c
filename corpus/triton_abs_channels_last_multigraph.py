"""CUDA channels-last conv net in two graphs; Triton prints abs(x) as -abs(x) in graph 1 only.

Needs a CUDA GPU. A graph break splits the backbone (graph 0) from an L1-style head
(graph 1) that calls abs; the planted bug negates abs on the Triton path.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("abs", "accuracy", form="negate", paths=("triton",))


class TwoStageNet(nn.Module):
    def __init__(self, ch=16, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, ch, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(ch)
        self.head = nn.Linear(2 * ch, classes)

    def forward(self, img):
        h = F.relu(self.bn1(self.conv1(img)))
        h = F.relu(self.bn2(self.conv2(h)))
        torch._dynamo.graph_break()
        centered = h - h.mean(dim=(2, 3), keepdim=True)
        mad = torch.abs(centered).mean(dim=(2, 3))  # mean absolute deviation per channel
        return self.head(torch.cat([h.mean(dim=(2, 3)), mad], dim=-1))


def main():
    torch.manual_seed(0)
    model = TwoStageNet().cuda().eval().to(memory_format=torch.channels_last)
    img = torch.randn(4, 3, 24, 24, device="cuda").to(memory_format=torch.channels_last)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(img)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
