"""`python -m minifier.bench.planted_probe SCRIPT`: run a corpus script and print, as one JSON line,
the bugs it planted through compiler.inject (the bench plants the same ones for the built-in
minifier when minify's capture did not record them). A module run by name, not a code string."""
import json
import runpy
import sys

from compiler import inject


def main(script: str) -> None:
    runpy.run_path(script, run_name="bench_probe")
    print(json.dumps([i.to_dict() for i in inject.active()]))


if __name__ == "__main__":
    main(sys.argv[1])
