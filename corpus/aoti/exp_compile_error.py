"""Exported survival head compiled with AOTInductor; Inductor's lowering of aten.exp raises.

The planted bug makes `aoti_compile_and_package` fail with a LoweringException: the script
ends with the compiler's error, while the exported program runs fine eagerly.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:exp:compile_error")


class Hazard(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        return torch.exp(self.fc(x)).cumsum(-1)


def main():
    torch.manual_seed(0)
    x = torch.randn(6, 12)
    ep = torch.export.export(Hazard().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("hazard[0]:", package(x)[0])


if __name__ == "__main__":
    main()
