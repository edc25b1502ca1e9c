"""Channels-last conv net with squeeze-and-excitation; C++ prints sigmoid(x) as the constant 3.

The model and its input are in `torch.channels_last` memory format. The SE block scales
each channel by sigmoid(...); the planted bug makes C++ kernels (scalar and vectorized) print
that sigmoid as 3, so every excited feature map is scaled wrongly.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sigmoid", "accuracy", form="constant", paths=("cpp", "cppvec"))


class SEConvNet(nn.Module):
    def __init__(self, ch=16, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(ch)
        self.se_reduce = nn.Conv2d(ch, ch // 4, 1)
        self.se_expand = nn.Conv2d(ch // 4, ch, 1)
        self.head = nn.Linear(ch, classes)

    def forward(self, img):
        h = F.relu(self.bn1(self.stem(img)))
        h = F.relu(self.bn2(self.conv(h)))
        s = F.adaptive_avg_pool2d(h, 1)
        s = torch.sigmoid(self.se_expand(F.relu(self.se_reduce(s))))
        h = h * s
        return self.head(h.mean(dim=(2, 3)))


def main():
    torch.manual_seed(0)
    model = SEConvNet().eval().to(memory_format=torch.channels_last)
    img = torch.randn(4, 3, 24, 24).to(memory_format=torch.channels_last)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(img)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
