"""MobileNetV2 (torchvision's architecture at width 0.5, written here in plain torch: torchvision
cannot be installed on the GPU machines this corpus runs on), random weights, 10 classes, 64x64
images, on CUDA. Its activations are ReLU6.

Inference: one forward in eval mode under no_grad. `--train`: one training step in train mode,
cross-entropy, backward, SGD step. No bug of its own; plant one with `minify --inject SPEC`
(corpus/gpu_models/manifest.json).
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn(cin, cout, k=3, stride=1, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, *([nn.ReLU6()] if act else []))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.block = nn.Sequential(*([conv_bn(cin, hidden, 1)] if expand != 1 else []),
                                   conv_bn(hidden, hidden, 3, stride, groups=hidden),
                                   conv_bn(hidden, cout, 1, act=False))

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class MobileNetV2(nn.Module):
    # (expansion, channels, repeats, stride) of torchvision's mobilenet_v2, channels at width 0.5
    SETTINGS = ((1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 3, 2), (6, 32, 4, 2), (6, 48, 3, 1), (6, 80, 3, 2),
                (6, 160, 1, 1))

    def __init__(self, classes=10):
        super().__init__()
        layers, cin = [conv_bn(3, 16, 3, 2)], 16
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 640, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(640, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = MobileNetV2().to(device).train(train)
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
