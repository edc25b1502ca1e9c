"""`python compiler/boot/compiled_call.py REPRO MANIFEST_JSON`: the repro's compiled call, uncaught,
so that the compiler's error text reaches standard error (repro.error_text): the repro's module-level
set-up (config, planted bugs) runs, its main block does not. Imports only the standard library and torch.
"""
import contextlib
import json
import os
import runpy
import sys


def main():
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    import torch

    manifest = json.loads(sys.argv[2])
    ns = runpy.run_path(sys.argv[1], run_name="minify_error_text")
    context = manifest.get("context") or {}
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch.set_grad_enabled(bool(context.get("grad_enabled", False))))
        if context.get("inference_mode"):
            stack.enter_context(torch.inference_mode())
        if context.get("autocast"):
            dtype = getattr(torch, context["autocast"]["dtype"])
            stack.enter_context(torch.autocast(context.get("device", "cpu"), dtype=dtype))
        torch.compile(ns["f"], **(manifest.get("compile") or {}))(*ns["make_inputs"]())


if __name__ == "__main__":
    main()
