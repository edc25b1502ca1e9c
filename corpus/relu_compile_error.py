"""Small conv net for 32x32 images, compiled with Inductor's own relu bug: compile error.

`torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"` makes the C++
backend print relu as `compile error!`, so the generated kernel fails to build and
torch.compile raises (a CppCompileError inside the exception). The model has exactly one
torch.relu; its other activations are SiLU, GELU and sigmoid, which do not lower to relu.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


class SmallConvNet(nn.Module):
    def __init__(self, channels=16, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(channels)
        self.conv3 = nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1)
        self.bn3 = nn.BatchNorm2d(2 * channels)
        self.se_reduce = nn.Linear(2 * channels, channels // 2)
        self.se_expand = nn.Linear(channels // 2, 2 * channels)
        self.fc = nn.Linear(2 * channels, classes)

    def forward(self, x):
        x = F.silu(self.bn1(self.stem(x)))
        # residual block; the one relu sits in the middle of the network
        r = self.bn2(self.conv2(x))
        x = torch.relu(x + r)
        x = F.max_pool2d(x, 2)
        x = F.gelu(self.bn3(self.conv3(x)))
        # squeeze-and-excitation gate
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        x = x * s[:, :, None, None]
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return F.log_softmax(self.fc(x), dim=-1)


def main():
    torch.manual_seed(0)
    model = SmallConvNet().eval()
    images = torch.randn(4, 3, 32, 32)

    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(images)
    print("predicted classes:", logits.argmax(dim=-1).tolist())


if __name__ == "__main__":
    main()
