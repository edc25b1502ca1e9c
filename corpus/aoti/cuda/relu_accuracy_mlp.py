"""An exported CUDA MLP compiled with AOTInductor; the planted Triton bug prints relu(x) as `x + 1`.

The GPU form of corpus/aoti/relu_accuracy_mlp.py: the package holds Triton kernels (a cubin per
kernel) instead of C++, and its outputs are wrong. Needs a CUDA GPU.
"""
import os
import tempfile

import torch
import torch.nn as nn

from compiler.inject import plant

plant("relu:accuracy@triton")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


def main():
    torch.manual_seed(0)
    model = MLP().cuda().eval()
    x = torch.randn(8, 16, device="cuda")
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tempfile.mkdtemp(), "mlp.pt2"))
    package = torch._inductor.aoti_load_package(path)
    print("scores[0]:", package(x)[0])


if __name__ == "__main__":
    main()
