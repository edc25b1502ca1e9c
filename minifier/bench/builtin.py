"""`--vs-builtin`: PyTorch's own minifier on a planted case, the documented two-step way.

The script runs under TORCHDYNAMO_REPRO_AFTER=aot (level 4 for accuracy, 2 for compile and
runtime errors, 3 for crashes), then `python minifier_launcher.py minify`. The built-in's minify
process and the sub-processes it starts must see the bug too: a bug planted through
`compiler.inject` lives only in the script's process, so the bench writes the same injections as
a sitecustomize.py on the PYTHONPATH of every built-in step after the dump run (which plants them
itself; a case planted on minify's command line, corpus/gpu_models, takes it in its dump run too),
standing in for a bug inside the installed torch. Bugs set through Inductor's own test
knobs (inject_relu_bug_TESTING_ONLY) travel in the launcher's config anyway. A foreign program
(kind `none`) has no repro level: nothing fails, so there is nothing for the built-in to minify.

The launcher runs as torch's own fix of it writes it (`fair_launcher`): torch 2.11 (the GPU
machines') copies the dump run's TORCHDYNAMO_REPRO_AFTER/LEVEL into the launcher, so `minify
--no-isolate` compiled every candidate under the dump hook again and stopped with "Input graph did
not fail the tester"; torch 2.13 writes `os.environ.pop` for them instead. The lines dropped are
in `launcher_fixed`; when the built-in fails, `failure` says at which step and why."""
from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from compiler.capture_record import CaptureSchemaError, ScriptEnding, read
from minifier.bench.cases import CORPUS, project_env, timed

REPRO_LEVEL = {"accuracy": 4, "compile_error": 2, "runtime_error": 2, "crash": 3,
               "device_assert": 2}  # corpus/gpu_models: a Triton assert raises in Python, as runtime_error
# FX op names (manifest) -> aten names the built-in's AOT-level repro shows for them.
ATEN_NAMES = {"and_": ["bitwise_and", "logical_and"], "truediv": ["div"], "floordiv": ["div", "floor_divide"],
              "mean": ["mean", "sum"], "layer_norm": ["native_layer_norm", "var_mean", "rsqrt"],
              "gelu": ["gelu", "erf"], "silu": ["silu", "sigmoid"], "hardswish": ["hardswish", "clamp"],
              "embedding": ["embedding", "index"], "amax": ["amax", "max"], "mul": ["mul"]}


REPRO_ENV = ("TORCHDYNAMO_REPRO_AFTER", "TORCHDYNAMO_REPRO_LEVEL")
_SETS_REPRO_ENV = re.compile(r"^os\.environ\[['\"](TORCHDYNAMO_REPRO_(?:AFTER|LEVEL))['\"]\]\s*=.*$", re.M)
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt)\b:?.*$", re.M)


def fair_launcher(text: str) -> tuple[str, list[str]]:
    """The launcher's text with each line that re-sets a repro variable replaced by the `pop` that
    torch 2.13 writes there; and the variables it dropped."""
    dropped = _SETS_REPRO_ENV.findall(text)
    return _SETS_REPRO_ENV.sub(lambda m: f"os.environ.pop({m.group(1)!r}, None)  # minify bench: as torch 2.13 "
                                         "writes it", text), dropped


def failure_line(text: str) -> str:
    """Why a built-in step failed, in one line: its last exception line, else its last line."""
    found = _EXCEPTION_LINE.findall(text)
    lines = text.strip().splitlines()
    return (found[-1] if found else lines[-1] if lines else "").strip()[:200]


def has_repro_level(case: dict) -> bool:
    """Whether the built-in minifier has anything to do on the case (a kind it dumps at some level)."""
    return case["kind"] in REPRO_LEVEL


def case_injections(out: Path, case: dict) -> list[dict]:
    """The bugs the script planted through compiler.inject, as the capture recorded them."""
    script_json = out / "work" / "capture" / "script.json"
    if script_json.exists():
        with contextlib.suppress(CaptureSchemaError):  # another minify's: the probe asks the script itself
            return read(ScriptEnding, script_json).injections
    proc = subprocess.run([sys.executable, "-m", "minifier.bench.planted_probe", str(CORPUS / case["script"])],
                          env=project_env(), capture_output=True, text=True, timeout=600)
    return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else []


def sitecustomize_source(injections: list[dict]) -> str:
    from compiler.inject import Injection, injection_source

    return ("# Written by minify bench: plants the case's bug in every Python process started with this\n"
            "# folder on PYTHONPATH, as if it were a bug in the installed torch.\n"
            "import torch\nimport torch._functorch.config\nimport torch._inductor.config\n"
            + injection_source([Injection.from_dict(d) for d in injections]))


def repro_ops(repro: Path) -> list[str]:
    """aten op names called in the forward of a built-in repro.py."""
    text = repro.read_text()
    body = text.split("def forward", 1)[1].split("\ndef ", 1)[0] if "def forward" in text else ""
    return re.findall(r"torch\.ops\.\w+\.(\w+)\.\w+\(", body)


def run_builtin(case: dict, work: Path, injections: list[dict], no_isolate: bool, timeout: float,
                cache: dict | None = None) -> dict:
    """PyTorch's after_aot minifier on the case, the documented two-step way; what it achieved.
    `cache`: environment naming the Inductor cache to use (seeded_cache)."""
    folder = work / "builtin" / case["name"]
    shutil.rmtree(folder, ignore_errors=True)
    site = folder / "site"
    site.mkdir(parents=True)
    cache = cache or {}
    if injections:
        (site / "sitecustomize.py").write_text(sitecustomize_source(injections))
    # A case planted on minify's command line (`inject`: corpus/gpu_models) is a plain script: its dump run
    # takes the plant from the sitecustomize.py as well. A warm AOTAutograd cache skips the after_aot
    # hook, so the dump would see no graph at all (its FX graph cache, which the hook does see, stays on).
    dump_env = {**project_env([site] if case.get("inject") else []), "TORCHDYNAMO_REPRO_AFTER": "aot",
                "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
                "TORCHDYNAMO_REPRO_LEVEL": str(REPRO_LEVEL[case["kind"]]),
                "TORCH_COMPILE_DEBUG_DIR": str(folder), **cache}
    result: dict = {"level": REPRO_LEVEL[case["kind"]], "carried_by": "sitecustomize" if injections else "config"}
    script = [sys.executable, str(CORPUS / case["script"]), *case.get("args", [])]  # args: corpus/gpu_models
    code, dump_s, _ = timed(script, folder, dump_env, timeout, folder / "dump.log")
    result.update(dump_rc=code, dump_seconds=round(dump_s, 1))
    launchers = sorted(folder.glob("torch_compile_debug/run_*/minifier/minifier_launcher.py"),
                       key=lambda p: p.stat().st_mtime)
    if not launchers:
        why = failure_line((folder / "dump.log").read_text(errors="replace")) if (folder / "dump.log").exists() else ""
        result.update(outcome="no launcher written", failure=f"dump run wrote no launcher (rc {code}): {why}",
                      seconds=round(dump_s, 1))
        return result
    env = {k: v for k, v in {**project_env([site]), **cache}.items() if k not in REPRO_ENV}
    result.update(minify_step(launchers[-1], env, no_isolate, timeout))
    result["seconds"] = round(dump_s + result["minify_seconds"], 1)
    code = result["minify_rc"]
    repro = folder / "repro.py"
    if code == 0 and repro.exists():
        ops = repro_ops(repro)
        names = {n for op in case["culprit_ops"] for n in [op, *ATEN_NAMES.get(op, [])]}
        rcode, _, _ = timed([sys.executable, str(repro)], folder, env, timeout, folder / "repro.log")
        result.update(ops_after=len(ops), ops=ops, culprit_ok=bool(names & set(ops)),
                      reproduces=rcode is not None and rcode != 0)
    return result


def minify_step(launcher: Path, env: dict, no_isolate: bool, timeout: float) -> dict:
    """`python minifier_launcher.py minify [--no-isolate]` on the fair launcher, without the repro
    variables in its environment either; what it said."""
    text, dropped = fair_launcher(launcher.read_text())
    launcher.write_text(text)
    env = {k: v for k, v in env.items() if k not in REPRO_ENV}
    folder = launcher.parents[3]
    cmd = [sys.executable, str(launcher), "minify", *(["--no-isolate"] if no_isolate else [])]
    code, seconds, log = timed(cmd, folder, env, timeout, folder / "minify.log")
    queries = re.findall(r"Made (\d+) queries", log)
    ok = code == 0 and bool(queries)
    result = {"launcher_fixed": dropped, "minify_rc": code, "minify_seconds": round(seconds, 1),
              "queries": int(queries[-1]) if queries else None,
              "outcome": "ok" if ok else "timed out" if code is None else failure_line(log) or f"rc {code}"}
    if not ok:
        result["failure"] = f"minify step {'timed out' if code is None else f'rc {code}'}: {failure_line(log)}"
    return result
