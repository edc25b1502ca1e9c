"""Exported spectrogram front end compiled with AOTInductor; its C++ log1p kernel aborts.

log1p of a strided view (`spec[..., ::2]`) is printed by the scalar C++ generator in an
OpenMP parallel loop; the planted bug makes it `throw 1`, so the process dies (SIGABRT) when
the loaded package runs.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("log1p", "runtime_error", paths=("cpp",))


class FrontEnd(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 8)

    def forward(self, spec):
        return self.fc(torch.log1p(spec[..., ::2].abs()))


def main():
    torch.manual_seed(0)
    spec = torch.randn(16, 200, 128)
    ep = torch.export.export(FrontEnd().eval(), (spec,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("features[0, 0]:", package(spec)[0, 0])


if __name__ == "__main__":
    main()
