"""Record every AOTInductor compile in the script's run (a private API: torch._inductor).

`torch._inductor.aoti_compile_and_package(ep)` is replaced by a version that saves the
ExportedProgram (`aoti_N/exported.pt2`, torch.export.save) before compiling it, and records a
compile error; the package loader by one whose loaded model, at its first call, saves the real
inputs (`aoti_N/inputs.pt`) and checks its outputs against the exported program run eagerly
(`ep.module()`) with the one oracle. A marker (`aoti_calling`) names the package being called,
so a crash in its C++ is placed. What each package did goes to `aoti_N/record.json`.
"""
from __future__ import annotations

import json
import os
import traceback
from pathlib import Path

import torch
import torch._inductor
import torch._inductor.package

from compiler import inject
from compiler.judging import Judging
from compiler.oracle import judged_check
from compiler.signature import exception_signature

STAGE = "aoti"  # the stage an AOTInductor package's outputs are judged at


def _write(folder: Path, record: dict) -> None:
    tmp = folder / "record.tmp"
    tmp.write_text(json.dumps(record, indent=1, default=str))
    os.replace(tmp, folder / "record.json")


def _key(path):
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else id(path)


class AotiRecorder:
    """The hooks' state for one run of the script: package N is `out/aoti_N`."""

    def __init__(self, out: Path, judging: Judging):
        self.out, self.judging = out, judging  # the run's tolerances, --strict, --ignore
        self.count = 0
        self.by_path: dict = {}  # package path -> (folder, record, ExportedProgram)
        self.real_compile = torch._inductor.aoti_compile_and_package
        self.real_load = torch._inductor.package.load_package

    def compile(self, exported_program, *args, package_path=None, **kwargs):
        folder = self.out / f"aoti_{self.count}"
        folder.mkdir(parents=True, exist_ok=True)
        record = {"index": self.count, "calls": 0, "inductor_configs": repr(kwargs.get("inductor_configs")),
                  "injections": [i.to_dict() for i in inject.active()]}  # planted when it compiled: its replays too
        self.count += 1
        try:
            torch.export.save(exported_program, folder / "exported.pt2")
        except Exception as exc:  # still compiled for the script; it cannot be rebuilt elsewhere
            record["unsaved"] = f"{type(exc).__name__}: {exc}"[:500]
        _write(folder, record)
        try:
            path = self.real_compile(exported_program, *args, package_path=package_path, **kwargs)
        except Exception as exc:
            kind, sig, msg = exception_signature(exc, "inductor")
            record["failure"] = {"kind": "compile_error", "signature": "compile_error" + sig[len(kind):],
                                 "message": msg, "when": "compile", "traceback": traceback.format_exc()[-4000:]}
            _write(folder, record)
            raise
        self.by_path[_key(path)] = (folder, record, exported_program)
        return path

    def load(self, path, *args, **kwargs):
        model = self.real_load(path, *args, **kwargs)
        known = self.by_path.get(_key(path))
        if known is None:  # made elsewhere: no exported program to check it against or turn it off with
            with open(self.out / "aoti_prebuilt.txt", "a") as listed:
                listed.write(f"{os.fspath(path) if isinstance(path, (str, os.PathLike)) else 'a file object'}\n")
            return model
        return CheckedPackage(model, *known, marker=self.out / "aoti_calling", judging=self.judging)


class CheckedPackage:
    """A loaded AOTInductor package that checks itself against its exported program at its first call."""

    def __init__(self, model, folder: Path, record: dict, ep, marker: Path, judging: Judging):
        self.model, self.folder, self.record, self.ep, self.marker = model, folder, record, ep, marker
        self.judging = judging

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, *args, **kwargs):
        record = self.record
        record["calls"] += 1
        self.marker.write_text(str(record["index"]))
        if record["calls"] == 1:
            try:
                torch.save({"args": args, "kwargs": kwargs}, self.folder / "inputs.pt")
            except Exception as exc:
                record["inputs_unsaved"] = f"{type(exc).__name__}: {exc}"[:500]
            _write(self.folder, record)
            self._check(args, kwargs)
        out = self.model(*args, **kwargs)
        self.marker.unlink(missing_ok=True)
        return out

    def _check(self, args, kwargs) -> None:
        """The package against the exported program run eagerly, on copies of the same inputs."""
        eager = self.ep.module()
        outcome = judged_check(lambda *a: eager(*a, **kwargs), list(args), lambda *a: self.model(*a, **kwargs),
                               STAGE, self.judging)
        self.record["verdict"] = outcome.__dict__
        if outcome.status == "fail":
            self.record["failure"] = {"kind": outcome.kind, "signature": outcome.signature,
                                      "message": outcome.message, "when": "run", "rung": outcome.rung}
        _write(self.folder, self.record)


def _recording_export(out: Path, real):
    """torch.export.export, writing `export_error.json` when it raises: an export that fails
    is the user's program's (data-dependent control flow without torch.cond, ...), and the
    verdict quotes the exporter's own message."""
    def export(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except Exception as exc:
            (out / "export_error.json").write_text(json.dumps({"type": type(exc).__name__,
                                                               "message": str(exc)[:4000]}))
            raise
    return export


def install(out: Path, judging: Judging) -> AotiRecorder:
    """Hook AOTInductor's compile and load for this run (aoti_load_package reads
    torch._inductor.package.load_package at each call, so both load paths are covered), and
    torch.export.export's errors."""
    recorder = AotiRecorder(out, judging)
    torch._inductor.aoti_compile_and_package = recorder.compile
    torch._inductor.package.load_package = recorder.load
    torch.export.export = _recording_export(out, torch.export.export)
    return recorder
