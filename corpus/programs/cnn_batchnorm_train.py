# Foreign program: a small CIFAR-10 style CNN with BatchNorm2d, trained for a few steps in train mode
# (BatchNorm updates its running_mean/running_var buffers inside the compiled forward). Modelled on
# the PyTorch "Training a Classifier" CIFAR-10 tutorial, with BatchNorm added as in torchvision's
# VGG-BN. Not written for minify; expected: nothing fails.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def main():
    torch.manual_seed(0)
    net = Net().train()
    compiled = torch.compile(net)
    images = torch.randn(8, 3, 16, 16)
    labels = torch.randint(0, 10, (8,))
    out = compiled(images)
    loss = F.cross_entropy(out, labels)
    print(f"loss {loss.item():.4f}  bn1.running_mean[:3] {net.bn1.running_mean[:3].tolist()}")
    return out


if __name__ == "__main__":
    main()
