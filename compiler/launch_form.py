"""How the user's program is launched: a script, a module (`python -m`), or one pytest test.

`minify script.py -- args`, `minify -m pkg.module -- args` and `minify path/test_x.py::test_y`
name the same program a user runs with `python script.py args`, `python -m pkg.module args`
and `pytest path/test_x.py::test_y`. The capture process (compiler.capture) runs it in-process
the way that command would: the working directory is the one minify was started in, and
sys.path[0], sys.argv and `__name__ == "__main__"` are what the normal run sees. A failing
test ends like a script raising its exception (its own assertion), so everything downstream
reads it as a script that fails.

pytest is the user's: imported only when a test is run, and never declared by this project.
"""
from __future__ import annotations

import os
import re
import runpy
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

FORMS = ("script", "module", "test")


class LaunchError(Exception):
    """The program could not be started the way it was named (no such test, no pytest)."""


@dataclass(frozen=True)
class Launch:
    form: str  # "script", "module" or "test"
    target: str  # the script's absolute path, the module's dotted name, or the test's node id (its file absolute)
    cwd: str  # the directory the program runs in
    torchrun: tuple[str, ...] = ()  # torchrun's options when the program is a distributed job (minify torchrun)

    @classmethod
    def script(cls, path: Path, cwd: Path | None = None) -> "Launch":
        return cls("script", str(Path(path).resolve()), str(cwd or Path.cwd()))

    @classmethod
    def from_dict(cls, data: dict) -> "Launch":
        return cls(data["form"], data["target"], data["cwd"], tuple(data.get("torchrun", ())))

    def to_dict(self) -> dict:
        """torchrun's options only for a distributed job: one process's launch reads as before."""
        data = asdict(self)
        if not self.torchrun:
            del data["torchrun"]
        return data

    @property
    def test_file(self) -> Path:
        return Path(self.target.split("::", 1)[0])

    @property
    def name(self) -> str:
        """A short name for folders and titles: the script's stem, the module's name, the test's name."""
        if self.form == "script":
            return Path(self.target).stem
        if self.form == "module":
            return self.target
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", self.target.rsplit("::", 1)[-1]).strip("_") or self.test_file.stem

    @property
    def command(self) -> str:
        """The command a user types to run it (for messages)."""
        if self.torchrun:
            return " ".join(["torchrun", *self.torchrun, *(["-m"] if self.form == "module" else []), self.target])
        if self.form == "module":
            return f"python -m {self.target}"
        if self.form == "test":
            return f"pytest {self.target}"
        return f"python {self.target}"

    def capture_args(self) -> list[str]:
        """What compiler.capture takes to run it: `[--form FORM] TARGET`."""
        return ([] if self.form == "script" else ["--form", self.form]) + [self.target]


def node_launch(nodeid: str, cwd: Path | None = None) -> Launch:
    """A pytest node id (`path/test_x.py::test_y`, `...::TestC::test_y[param]`), its file made absolute."""
    path, sep, rest = nodeid.partition("::")
    return Launch("test", f"{Path(path).resolve()}{sep}{rest}", str(cwd or Path.cwd()))


def module_file(name: str, search: list[str]) -> Path | None:
    """The file `python -m name` runs, found on disk in `search` (sys.path's entries) without
    importing anything: pkg/mod.py, or pkg/mod/__main__.py for a package; None if not found."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return None
    rel = Path(*name.split("."))
    for entry in search:
        base = Path(entry or ".")
        for candidate in (base / rel.with_suffix(".py"), base / rel / "__main__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def run(launch: Launch, args: list[str]) -> None:
    """Run the program in this process as its normal command would; it raises what the program
    raises (SystemExit included)."""
    while "" in sys.path:  # `python -c`'s entry: a normal run of the program has no such entry
        sys.path.remove("")
    if launch.form == "script":
        sys.argv = [launch.target, *args]
        sys.path.insert(0, str(Path(launch.target).parent))
        runpy.run_path(launch.target, run_name="__main__")
    elif launch.form == "module":
        sys.argv = [launch.target, *args]  # run_module puts the module's file in sys.argv[0]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(launch.target, run_name="__main__", alter_sys=True)
    elif launch.form == "test":
        run_test(launch.target, args)
    else:
        raise LaunchError(f"unknown launch form {launch.form!r}")


def run_test(nodeid: str, args: list[str]) -> None:
    """Run one pytest test here (as `python -m pytest NODEID` would); a failing test re-raises
    the test's own exception, so it ends like a script raising it."""
    try:
        import pytest
    except ModuleNotFoundError:
        raise LaunchError("pytest is not installed in this Python environment: pip install pytest") from None

    class FirstError:
        """Keeps the first exception a test (or its collection) raised."""
        error: BaseException | None = None

        def pytest_exception_interact(self, node, call, report):
            if self.error is None and call.excinfo is not None:
                self.error = call.excinfo.value

    seen = FirstError()
    sys.argv = ["pytest", nodeid, *args]
    sys.path.insert(0, os.getcwd())
    code = pytest.main([nodeid, "-x", "-q", "-p", "no:cacheprovider", *args], plugins=[seen])
    if int(code) == 0:
        return
    if seen.error is not None:
        raise seen.error
    if int(code) == int(pytest.ExitCode.TESTS_FAILED):
        raise AssertionError(f"the test {nodeid} failed (pytest gave no exception)")
    raise LaunchError(f"pytest did not run the test {nodeid}: exit code {int(code)} "
                      f"({getattr(code, 'name', 'error').lower().replace('_', ' ')}); see the script's log")
