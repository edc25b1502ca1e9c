# Foreign program: a ResNet basic block (torchvision.models.resnet.BasicBlock, eval-mode BatchNorm)
# run under `torch.inference_mode()`, and a small embedding-bag text classifier (from the PyTorch
# "Text classification with the torchtext library" tutorial) run under `torch.no_grad()`, both
# compiled. Expected: nothing fails.
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, d=16, classes=4):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab, d, mode="mean")
        self.fc = nn.Linear(d, classes)

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def main():
    torch.manual_seed(0)
    block = BasicBlock().eval()
    for bn in (block.bn1, block.bn2):  # make the running stats non-trivial
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 1.5)
    clf = TextClassifier().eval()
    cblock, cclf = torch.compile(block), torch.compile(clf)
    with torch.inference_mode():
        y = cblock(torch.randn(2, 8, 10, 10))
    with torch.no_grad():
        text = torch.randint(0, 50, (20,))
        offsets = torch.tensor([0, 7, 12])
        logits = cclf(text, offsets)
    print("block", f"{y.mean().item():.4f}", "logits argmax", logits.argmax(1).tolist())
    return y, logits


if __name__ == "__main__":
    main()
