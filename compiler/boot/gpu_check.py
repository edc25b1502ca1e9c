"""`python compiler/boot/gpu_check.py`: a fresh process allocates on the GPU, computes, syncs and
prints `ok` (minifier.report.gpu_health: is the GPU still usable after the run?).
Imports only the standard library and torch."""
import os
import sys


def main():
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    import torch

    x = torch.ones(1, device='cuda')
    assert x.sum().item() == 1.0
    torch.cuda.synchronize()
    print('ok')


if __name__ == "__main__":
    main()
