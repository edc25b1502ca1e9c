"""`python compiler/boot/control_run.py REPRO`: the control run, repro.py with nothing compiled
(repro.verify.run_control). TORCHDYNAMO_DISABLE is read at each torch.compile call (and inherited by
a crash repro's child); config.disable covers a process that imported torch before the variable was
set (a forked or prewarmed one). Imports only the standard library and torch.
"""
import os
import runpy
import sys


def main():
    repro = sys.argv[1]
    os.environ["TORCHDYNAMO_DISABLE"] = "1"
    import torch

    torch._dynamo.config.disable = True
    sys.argv = [repro]
    sys.path[0] = os.path.dirname(repro)  # this folder off sys.path: the repro's own, as `python repro.py` has it
    runpy.run_path(repro, run_name="__main__")


if __name__ == "__main__":
    main()
