"""`PYTHON compiler/boot/torch_version.py`: the torch installed for PYTHON, from its metadata (no
`import torch`), printed (minifier.versions.venvs asks another build's Python). Imports only the
standard library, and runs on any Python 3 that a version's venv has."""
import importlib.metadata
import os
import sys


def main():
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    print(importlib.metadata.version('torch'))


if __name__ == "__main__":
    main()
