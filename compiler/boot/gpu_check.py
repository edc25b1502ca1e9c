"""`python compiler/boot/gpu_check.py`: a fresh process allocates on the GPU, writes, reads back,
syncs and prints `ok` (minifier.report.gpu_health: is the GPU still usable after the run?).
Imports only the standard library and torch.

NVIDIA's driver is asked directly (libcuda through ctypes: its context, an allocation, a memset,
a copy back, a sync): the same proof as torch's `ones(1, device='cuda').sum()`, without the
seconds `import torch` takes after every GPU run. Where libcuda is absent (ROCm) torch does it.
"""
import ctypes
import os
import sys


def _driver_check() -> bool | None:
    """True/False: the driver answered/failed; None: no libcuda here."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    dev, ctx, ptr, host = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64(), ctypes.c_uint32()
    steps = (("cuInit", (0,)), ("cuDeviceGet", (ctypes.byref(dev), 0)),
             ("cuDevicePrimaryCtxRetain", (ctypes.byref(ctx), dev)), ("cuCtxSetCurrent", (ctx,)),
             ("cuMemAlloc_v2", (ctypes.byref(ptr), ctypes.c_size_t(4))),
             ("cuMemsetD32_v2", (ptr, ctypes.c_uint(7), ctypes.c_size_t(1))),
             ("cuMemcpyDtoH_v2", (ctypes.byref(host), ptr, ctypes.c_size_t(4))), ("cuCtxSynchronize", ()))
    for name, args in steps:
        code = getattr(cuda, name)(*args)
        if code != 0:
            print(f"{name} failed: CUresult {code}", file=sys.stderr)
            return False
    cuda.cuMemFree_v2(ptr)
    if host.value != 7:
        print(f"read back {host.value}, wrote 7", file=sys.stderr)
        return False
    return True


def _torch_check() -> bool:
    import torch

    x = torch.ones(1, device='cuda')
    assert x.sum().item() == 1.0
    torch.cuda.synchronize()
    return True


def main():
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    answered = _driver_check()
    if answered is None:
        answered = _torch_check()
    if not answered:
        sys.exit(1)
    print('ok')


if __name__ == "__main__":
    main()
