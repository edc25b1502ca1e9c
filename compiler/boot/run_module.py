"""`python compiler/boot/run_module.py MODULE ARGS...` runs as `python -m MODULE ARGS...` would,
except that this project's packages come before the working directory on sys.path, so a user's own
`compiler.py` or `repro.py` cannot shadow them. Imports only the standard library."""
import os
import runpy
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> None:
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ""  # this folder off sys.path: the working directory, as `python -c` has it
    module = sys.argv.pop(1)
    sys.path[0:0] = [ROOT]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
