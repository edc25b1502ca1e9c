"""Image denoiser with a hand-written contrast normalization; a vectorized sqrt aborts.

The planted bug makes the vectorized C++ code for sqrt execute `throw 1`, so the compiled
model kills the process with SIGABRT the first time it runs. sqrt appears once, in the
local contrast normalization between the two conv stages.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sqrt", "runtime_error", paths=("cppvec",))


class Denoiser(nn.Module):
    def __init__(self, ch=16):
        super().__init__()
        self.enc1 = nn.Conv2d(3, ch, 3, padding=1)
        self.enc2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.dec1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.dec2 = nn.Conv2d(ch, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(ch)

    def forward(self, img):
        h = F.leaky_relu(self.enc1(img), 0.1)
        h = F.leaky_relu(self.bn(self.enc2(h)), 0.1)
        mean = h.mean(dim=(2, 3), keepdim=True)
        var = (h - mean).pow(2).mean(dim=(2, 3), keepdim=True)
        h = (h - mean) / torch.sqrt(var + 1e-5)  # local contrast normalization
        h = F.elu(self.dec1(h))
        return img - torch.tanh(self.dec2(h)) * 0.1


def main():
    torch.manual_seed(0)
    model = Denoiser().eval()
    img = torch.rand(2, 3, 32, 32)
    compiled = torch.compile(model)
    with torch.no_grad():
        clean = compiled(img)
    print("mean pixel:", float(clean.mean()))


if __name__ == "__main__":
    main()
