"""Exported audio model whose `Compressor` submodule (inside `Frontend`) runs expm1 on a
strided view; compiled with AOTInductor, its scalar C++ expm1 kernel aborts.

expm1 of `x[..., ::2]` is printed by the scalar C++ generator in an OpenMP parallel loop; the
planted bug makes it `throw 1`, so the process dies (SIGABRT) when the loaded package runs.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("expm1", "runtime_error", paths=("cpp",))


class Compressor(nn.Module):
    def forward(self, x):
        return torch.expm1(x[..., ::2].abs().clamp(max=4.0))


class Frontend(nn.Module):
    def __init__(self):
        super().__init__()
        self.compress = Compressor()
        self.fc = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc(self.compress(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = Frontend()
        self.classifier = nn.Linear(8, 2)

    def forward(self, x):
        return self.classifier(torch.relu(self.frontend(x)))


def main():
    torch.manual_seed(0)
    x = torch.randn(16, 200, 128)
    ep = torch.export.export(Model().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("scores[0, 0]:", package(x)[0, 0])


if __name__ == "__main__":
    main()
