"""`python compiler/boot/control_run.py REPRO [ARGS]`: the control run, a program with nothing
compiled (repro.verify.run_control; compiler.aoti_control.control_command for program candidates).
TORCHDYNAMO_DISABLE is read at each torch.compile call (and inherited by a crash repro's child);
config.disable covers a process that imported torch before the variable was set (a forked or
prewarmed one). AOTInductor is turned off too (turn_off_aoti): turning Dynamo off leaves
`torch._inductor.aoti_compile_and_package` as it is, so an AOTInductor bug would show in the control
and be taken for the user's own. Imports only the standard library and torch.
"""
import os
import runpy
import sys


def turn_off_aoti() -> None:
    """In this process: "compiling" with AOTInductor keeps the ExportedProgram, and the loaded
    "package" runs `ep.module()`, the exported program run eagerly. A package this process did not
    make (a file from an earlier run) cannot be turned off: it is loaded for real, and
    `torch._inductor._minify_aoti_uncontrolled` says so."""
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


def main():
    program = sys.argv[1]
    os.environ["TORCHDYNAMO_DISABLE"] = "1"
    import torch

    torch._dynamo.config.disable = True
    turn_off_aoti()
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(program)  # this folder off sys.path: the program's own, as `python X.py` has it
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
