"""ResNet-18 (torchvision's architecture, written here in plain torch: torchvision cannot be
installed on the GPU machines this corpus runs on), random weights, 10 classes, 64x64 images, on CUDA.

Inference: one forward in eval mode under no_grad. `--train`: one training step in train mode
(BatchNorm batch statistics), cross-entropy, backward, SGD step. No bug of its own; plant one with
`minify --inject SPEC` (corpus/gpu_models/manifest.json).
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ResNet18().to(device).train(train)
    images = torch.randn(4, 3, 64, 64, device=device)
    compiled = torch.compile(model)
    if not train:
        with torch.no_grad():
            return compiled(images)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(compiled(images), torch.arange(4, device=device))
    loss.backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None][:4]
    opt.step()
    return loss, grads


if __name__ == "__main__":
    out = main()
    print("done", float(out[0] if isinstance(out, tuple) else out.float().sum()))
