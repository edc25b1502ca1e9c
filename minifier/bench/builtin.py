"""`--vs-builtin`: PyTorch's own minifier on a planted case, the documented two-step way.

The script runs under TORCHDYNAMO_REPRO_AFTER=aot (level 4 for accuracy, 2 for compile and
runtime errors, 3 for crashes), then `python minifier_launcher.py minify`. The built-in's minify
process and the sub-processes it starts must see the bug too: a bug planted through
`compiler.inject` lives only in the script's process, so the bench writes the same injections as
a sitecustomize.py on the PYTHONPATH of every built-in step after the dump run (which plants them
itself), standing in for a bug inside the installed torch. Bugs set through Inductor's own test
knobs (inject_relu_bug_TESTING_ONLY) travel in the launcher's config anyway. A foreign program
(kind `none`) has no repro level: nothing fails, so there is nothing for the built-in to minify."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from minifier.bench.cases import CORPUS, project_env, timed

REPRO_LEVEL = {"accuracy": 4, "compile_error": 2, "runtime_error": 2, "crash": 3}
# FX op names (manifest) -> aten names the built-in's AOT-level repro shows for them.
ATEN_NAMES = {"and_": ["bitwise_and", "logical_and"], "truediv": ["div"], "floordiv": ["div", "floor_divide"],
              "mean": ["mean", "sum"], "layer_norm": ["native_layer_norm", "var_mean", "rsqrt"],
              "gelu": ["gelu", "erf"], "silu": ["silu", "sigmoid"], "hardswish": ["hardswish", "clamp"],
              "embedding": ["embedding", "index"], "amax": ["amax", "max"], "mul": ["mul"]}


def has_repro_level(case: dict) -> bool:
    """Whether the built-in minifier has anything to do on the case (a kind it dumps at some level)."""
    return case["kind"] in REPRO_LEVEL


def case_injections(out: Path, case: dict) -> list[dict]:
    """The bugs the script planted through compiler.inject, as the capture recorded them."""
    script_json = out / "work" / "capture" / "script.json"
    if script_json.exists():
        return json.loads(script_json.read_text()).get("injections", [])
    code = ("import json, runpy\nfrom compiler import inject\n"
            f"runpy.run_path({str(CORPUS / case['script'])!r}, run_name='bench_probe')\n"
            "print(json.dumps([i.to_dict() for i in inject.active()]))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=project_env(), capture_output=True, text=True, timeout=600)
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
    # A warm AOTAutograd cache skips the after_aot hook, so the dump would see no graph at all
    # (its FX graph cache, which the hook does see, stays on).
    dump_env = {**project_env(), "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
                "TORCHDYNAMO_REPRO_LEVEL": str(REPRO_LEVEL[case["kind"]]),
                "TORCH_COMPILE_DEBUG_DIR": str(folder), **cache}
    result: dict = {"level": REPRO_LEVEL[case["kind"]], "carried_by": "sitecustomize" if injections else "config"}
    code, dump_s, _ = timed([sys.executable, str(CORPUS / case["script"])], folder, dump_env, timeout,
                            folder / "dump.log")
    result.update(dump_rc=code, dump_seconds=round(dump_s, 1))
    launchers = sorted(folder.glob("torch_compile_debug/run_*/minifier/minifier_launcher.py"),
                       key=lambda p: p.stat().st_mtime)
    if not launchers:
        result.update(outcome="no launcher written", seconds=round(dump_s, 1))
        return result
    env = {**project_env([site]), **cache}
    cmd = [sys.executable, str(launchers[-1]), "minify", *(["--no-isolate"] if no_isolate else [])]
    code, minify_s, text = timed(cmd, folder, env, timeout, folder / "minify.log")
    queries = re.findall(r"Made (\d+) queries", text)
    result.update(minify_rc=code, minify_seconds=round(minify_s, 1), seconds=round(dump_s + minify_s, 1),
                  queries=int(queries[-1]) if queries else None,
                  outcome="ok" if code == 0 and queries else
                  ("timed out" if code is None else text.strip().splitlines()[-1][:200] if text.strip() else f"rc {code}"))
    repro = folder / "repro.py"
    if code == 0 and repro.exists():
        ops = repro_ops(repro)
        names = {n for op in case["culprit_ops"] for n in [op, *ATEN_NAMES.get(op, [])]}
        rcode, _, _ = timed([sys.executable, str(repro)], folder, env, timeout, folder / "repro.log")
        result.update(ops_after=len(ops), ops=ops, culprit_ok=bool(names & set(ops)),
                      reproduces=rcode is not None and rcode != 0)
    return result
