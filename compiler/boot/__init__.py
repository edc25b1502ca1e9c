"""Programs that other processes run by path (`python compiler/boot/NAME.py ARGS`), never as code
strings: the zygote (zygote.py), the capture's start that forks it (host.py), `python -m` with this
project first on sys.path (run_module.py), the pre-started repro runner (prewarmed_repro.py), a
repro's compiled call left uncaught for its error text (compiled_call.py), the control run with
nothing compiled (control_run.py), the GPU's health check (gpu_check.py) and the torch version of
another build's Python (torch_version.py). wire.py is no program but the one wire protocol their
messages travel in: the boot files load it by path, the rest of minify imports it as compiler.boot.wire.

Each runs in a process of its own and imports only the standard library and torch, never minify's
packages (tests/test_boot.py checks): what a forked child inherits must be torch and nothing else.
They live under compiler/ because they reach torch's private modules (torch._inductor.config,
torch._dynamo), which only compiler/ may, and because both repro/ and minifier/ start them. Each
takes its own folder off the front of sys.path, where `python FILE` puts it, and leaves there what
`python -c` left (the working directory), so a file here can shadow no module of the programs run.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZYGOTE = str(HERE / "zygote.py")
HOST = str(HERE / "host.py")
RUN_MODULE = str(HERE / "run_module.py")
PREWARMED_REPRO = str(HERE / "prewarmed_repro.py")
COMPILED_CALL = str(HERE / "compiled_call.py")
GPU_CHECK = str(HERE / "gpu_check.py")
CONTROL_RUN = str(HERE / "control_run.py")
TORCH_VERSION = str(HERE / "torch_version.py")
