"""A real bug, as a deployment script meets it: AOTInductor wraps int64 products at 32 bits.

Public report: https://github.com/pytorch/pytorch/issues/175966 (reported for torch.compile;
the exported program compiled with aoti_compile_and_package goes through the same lowering).
The product of an int64 arange and an int64 constant is computed in int32 by the package, so
offsets from 3e9 on wrap (3e9 -> -1294967296); the exported program run eagerly is right.
torch 2.13.0, CPU: 8 of 11 offsets wrong (tried with the size as an input tensor: that passes). Integer results.
"""
import os
import tempfile

import torch
import torch.nn as nn


class RecordOffsets(nn.Module):
    """Byte offsets of fixed-size records in a large file."""

    def forward(self, x):
        return torch.arange(0, 11, dtype=torch.int64) * torch.tensor([int(1e9)], dtype=torch.int64)


def main():
    x = torch.zeros(1)
    ep = torch.export.export(RecordOffsets(), (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tempfile.mkdtemp(), "offsets.pt2"))
    offsets = torch._inductor.aoti_load_package(path)(x)
    print("offsets:", offsets.tolist())


if __name__ == "__main__":
    main()
