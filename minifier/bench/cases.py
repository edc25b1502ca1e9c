"""The bench's cases and how one is run: the two manifests, the selection, a fresh minify process."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
# Planted failing cases, then the foreign programs (kind `none`: nothing fails, minify exits 3).
MANIFESTS = (CORPUS / "manifest.json", CORPUS / "programs" / "manifest.json")


def load_manifest() -> list[dict]:
    """Every case of both manifests; each `script` is relative to corpus/."""
    return [case for path in MANIFESTS if path.exists() for case in json.loads(path.read_text())]


def expects_nothing_failed(case: dict) -> bool:
    """A foreign program with no bug in it: the right answer is exit 3, "Nothing failed"."""
    return case["kind"] == "none"


def select(cases: list[dict], names: str | None, substring: str | None, device: str, everything: bool) -> list[dict]:
    """--cases / -k pick cases (any device); otherwise the device's `default`-tagged cases (or all with --all)."""
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in {c["name"] for c in cases}]
        if unknown:
            raise SystemExit(f"minify bench: unknown case(s): {', '.join(unknown)}")
        return [c for c in cases if c["name"] in wanted]
    if substring:
        return [c for c in cases if substring in c["name"]]
    return [c for c in cases if c["device"] == device and (everything or "default" in c.get("tags", []))]


def project_env(extra_path: list[Path] = ()) -> dict:
    """The environment every tool the bench times runs in. Inductor's FX graph and AOTAutograd
    caches are off for all of them, the script alone included: minify turns them off in its own
    processes (a compile with a bug planted must never be served to a clean one), so with them on
    the script alone would skip the compile work minify has to do, and the ratio would measure
    the cache, not the tool."""
    env = dict(os.environ)
    env.update(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
    env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["COLUMNS"] = "200"
    return env


def seeded_cache(case: dict, folder: Path, timeout: float) -> dict:
    """An Inductor cache as a user's is when they reach for a minifier: empty, then filled by
    one run of the failing script (its kernels and its graph's cache entries, nothing of any
    earlier minification). The environment that points a tool at it; the run is not timed."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(folder)}
    timed([sys.executable, str(CORPUS / case["script"])], folder, {**project_env(), **env}, timeout,
          folder.parent / f"{folder.name}-seed.log")
    return env


def run_minify(case: dict, out: Path, timeout: float, jobs: int,
               env: dict | None = None) -> tuple[int | None, float, str]:
    """minify on the case's script in a fresh process; (exit code or None on timeout, seconds,
    everything it printed)."""
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "minifier", str(CORPUS / case["script"]), "-o", str(out), "-q", "-j", str(jobs)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=out.parent, env={**project_env(), **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)
        code, log = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        code, log = None, f"timed out after {timeout:.0f} s"
    return code, time.perf_counter() - start, log


def timed(cmd: list[str], cwd: Path, env: dict, timeout: float, log: Path) -> tuple[int | None, float, str]:
    """Run `cmd`, its output kept in `log`; (exit code or None on timeout, seconds, output)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, text = None, f"{exc.stdout or ''}{exc.stderr or ''}\ntimed out after {timeout:.0f} s"
        text = text if isinstance(text, str) else str(text)
    log.write_text(text)
    return code, time.perf_counter() - start, text
