"""AOTInductor turned off, for every run that stands for "nothing compiled".

Turning Dynamo off (TORCHDYNAMO_DISABLE=1) leaves `torch._inductor.aoti_compile_and_package`
and the package loader as they are: a script that exports a module and compiles it with
AOTInductor still runs Inductor's C++ there, so a bug of AOTInductor would show in the
control too and be taken for the user's own. Here the two are replaced: "compiling" keeps the
ExportedProgram, and the loaded "package" runs `ep.module()`, the exported program run eagerly.
A package this process did not make (a file from an earlier run) cannot be turned off: it
is loaded for real, and `torch._inductor._minify_aoti_uncontrolled` says so.

TURN_OFF_SOURCE needs only torch: the verification control pastes it into the script that
runs repro.py, so a repro needs no minify to be checked.
"""
from __future__ import annotations

import os
import sys

TURN_OFF_SOURCE = '''
def _minify_aoti_off():
    import os
    import torch._inductor
    import torch._inductor.package
    if getattr(torch._inductor, "_minify_aoti_off", False):
        return
    packages = {}
    real_load = torch._inductor.package.load_package

    def key(path):
        return os.fspath(path) if isinstance(path, (str, os.PathLike)) else id(path)

    class EagerPackage:
        """What aoti_load_package returns, running the exported program eagerly."""
        def __init__(self, ep):
            self.exported_program, self.module = ep, ep.module()

        def __call__(self, *args, **kwargs):
            return self.module(*args, **kwargs)

    def aoti_compile_and_package(exported_program, *args, package_path=None, **kwargs):
        path = package_path if package_path is not None else f"<aoti package {len(packages)}, run eagerly>"
        packages[key(path)] = exported_program
        return path

    def load_package(path, *args, **kwargs):
        if key(path) in packages:
            return EagerPackage(packages[key(path)])
        torch._inductor._minify_aoti_uncontrolled = True
        return real_load(path, *args, **kwargs)

    torch._inductor.aoti_compile_and_package = aoti_compile_and_package
    torch._inductor.package.load_package = load_package
    torch._inductor._minify_aoti_off = True


_minify_aoti_off()
'''


def turn_off() -> None:
    """In this process: AOTInductor compiles nothing and its packages run eagerly."""
    exec(compile(TURN_OFF_SOURCE, "<minify: AOTInductor off>", "exec"), {"__name__": "minify_aoti_off"})


_RUNNER = """import os, runpy, sys
os.environ["TORCHDYNAMO_DISABLE"] = "1"
import torch
torch._dynamo.config.disable = True
{turn_off}
sys.argv[0] = {path!r}
sys.path[0] = os.path.dirname({path!r})
runpy.run_path({path!r}, run_name="__main__")
"""


def control_command(path) -> list[str]:
    """`python PATH` with nothing compiled: Dynamo off (as TORCHDYNAMO_DISABLE=1) and AOTInductor off."""
    path = os.path.abspath(os.fspath(path))
    return [sys.executable, "-c", _RUNNER.format(turn_off=TURN_OFF_SOURCE, path=path)]
