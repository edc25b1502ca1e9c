"""Exported encoder of nested blocks compiled with AOTInductor; the bug is in a submodule's op.

`Encoder` holds two `Block`s, each a projection followed by a `Gate` submodule whose tanh the
planted C++ bug prints as `tanh(x) + 1`. Export flattens the nesting into one graph; the
package's outputs are wrong, nothing raises.
"""
import os
import tempfile

import torch
import torch.nn as nn

from compiler.inject import plant

plant("tanh:accuracy")


class Gate(nn.Module):
    def forward(self, x):
        return x * torch.tanh(x)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.gate = Gate()

    def forward(self, x):
        return x + self.gate(self.proj(x))


class Encoder(nn.Module):
    def __init__(self, width=24):
        super().__init__()
        self.blocks = nn.Sequential(Block(width), Block(width))
        self.head = nn.Linear(width, 3)

    def forward(self, x):
        return self.head(self.blocks(x))


def main():
    torch.manual_seed(0)
    x = torch.randn(10, 24)
    ep = torch.export.export(Encoder().eval(), (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tempfile.mkdtemp(), "enc.pt2"))
    package = torch._inductor.aoti_load_package(path)
    print("logits[0]:", package(x)[0])


if __name__ == "__main__":
    main()
