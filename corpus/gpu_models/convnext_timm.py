"""timm's ConvNeXt (`convnext_atto`'s block: depthwise 7x7 conv, channels-last LayerNorm, MLP with
GELU, layer scale; written here in plain torch after timm/models/convnext.py: timm cannot be
installed on the GPU machines this corpus runs on), 2 stages, random weights, 64x64 images, on CUDA.

Inference: one forward under no_grad. `--train`: one training step, cross-entropy, backward, SGD
step. No bug of its own; plant one with `minify --inject SPEC` (corpus/gpu_models/manifest.json).
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.5))  # timm starts at ls_init; 0.5 keeps the MLP visible

    def forward(self, x):
        shortcut = x
        x = self.norm(self.conv_dw(x).permute(0, 2, 3, 1))
        x = self.fc2(F.gelu(self.fc1(x))) * self.gamma
        return shortcut + x.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, dims=(32, 64), depths=(2, 2), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), nn.GroupNorm(1, dims[0]))
        stages, cin = [], dims[0]
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            down = [nn.GroupNorm(1, cin), nn.Conv2d(cin, dim, 2, 2)] if i else []
            stages.append(nn.Sequential(*down, *[ConvNeXtBlock(dim) for _ in range(depth)]))
            cin = dim
        self.stages = nn.Sequential(*stages)
        self.head_norm = nn.LayerNorm(cin)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(self.head_norm(x.mean((2, 3))))


def main(train: bool = "--train" in sys.argv):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ConvNeXt().to(device).train(train)
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
