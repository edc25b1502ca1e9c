"""A real bug, as a deployment script meets it: aoti_compile_and_package raises on
sum(dtype=int32) of a tensor holding -inf.

Public report: https://github.com/pytorch/pytorch/issues/190421 (reported for torch.compile;
closed 2026, the fix is not in 2.13). The exported program runs eagerly (the float->int cast of
-inf is implementation defined, eager returns a number); Inductor's index propagation, which
AOTInductor runs too, folds the constant and raises `OverflowError: cannot convert float
infinity to integer`. torch 2.13.0, CPU.
"""
import torch
import torch.nn as nn


class LogCount(nn.Module):
    def forward(self, x):
        y = torch.log(torch.zeros_like(x))  # log(0) -> -inf
        return torch.sum(y, dtype=torch.int32).float() + x.sum()


def main():
    x = torch.ones(2)
    ep = torch.export.export(LogCount(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print(package(x))


if __name__ == "__main__":
    main()
