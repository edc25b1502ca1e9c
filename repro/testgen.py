"""A pytest regression test from a repro folder: fails while the bug exists, passes once fixed.

The test carries the repro's graph, its inputs and its check (the same plain-torch check
repro.py makes, as a function `check()`), compiles with the captured settings and config,
and asserts that nothing differs. A planted bug (compiler.inject) is not part of the test unless
asked for (`with_injection`): by default the test judges the compiler as it is, so it fails
while the injection or config that causes the bug is active. Crashes, hangs and planted bugs
run the check in a child process, so one bad test cannot take the whole pytest run down.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import sys
import textwrap
from pathlib import Path

from repro.manifest import ReproFolderError, read_manifest, repro_folders
from repro.one_line_parser import OneLineParser

CRASHING = ("crash", "hang")


def slug(text: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower() or "repro"


def default_name(repro_dir: Path, manifest: dict) -> str:
    """`test_<script>_graph<N>_<kind>`, or after the folder when the script is unknown."""
    script, graph = Path(manifest.get("script") or "").stem, manifest.get("graph")
    named = re.match(r"(.+?)\.py, graph (\d+)", manifest.get("source") or "")
    if (not script or graph is None) and named:  # older callers only filled in `source`
        script, graph = Path(named.group(1)).stem, int(named.group(2))
    where = f"{script}_graph{graph}" if script and graph is not None else repro_dir.resolve().name
    return f"test_{slug(where)}_{slug(manifest['kind'])}"


def repro_id(manifest: dict) -> str:
    """Identifies the repro a test was written from (same repro: same test file, rewritten)."""
    key = "\n".join(str(manifest.get(k)) for k in ("module_source", "make_inputs_source", "signature", "config"))
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def _free_path(dest_dir: Path, name: str, ident: str) -> Path:
    """dest/NAME.py, or NAME_2.py, ... when NAME.py came from another repro."""
    for n in range(1, 1000):
        path = dest_dir / (f"{name}.py" if n == 1 else f"{name}_{n}.py")
        if not path.exists() or f"# minify-repro-id: {ident}" in path.read_text():
            return path
    raise ReproFolderError(f"too many tests named {name} in {dest_dir}")


def write_test(repro_dir: Path, dest_dir: Path, with_injection: bool = False, name: str | None = None) -> Path:
    """Write a pytest file for the repro in `repro_dir` into `dest_dir` (plus, if the repro has
    one, its inputs file, copied beside it). Returns the test's path."""
    manifest = read_manifest(repro_dir)
    if "check_source" not in manifest:
        raise ReproFolderError(f"{repro_dir} was written by an older minify (its repro needs a sidecar oracle); "
                               f"minify the script again")
    inputs = repro_dir / manifest["inputs_file"] if manifest.get("inputs_file") else None
    if inputs is not None and not inputs.is_file():
        raise ReproFolderError(f"{repro_dir} lacks {inputs.name}, the inputs its repro.py loads")
    dest_dir.mkdir(parents=True, exist_ok=True)
    ident = repro_id(manifest)
    stem = default_name(repro_dir, manifest) if not name else slug(name)
    path = _free_path(dest_dir, stem if stem.startswith("test_") else f"test_{stem}", ident)
    inputs_name = None
    if inputs is not None:
        inputs_name = f"{path.stem}_inputs.pt"
        shutil.copyfile(inputs, dest_dir / inputs_name)
    path.write_text(render_test(manifest, path.stem, ident, inputs_name, with_injection, repro_dir))
    return path


def write_tests(root: Path, dest_dir: Path, with_injection: bool = False) -> list[Path]:
    """One test per repro folder under `root` (the main one and each `bug-N`)."""
    folders = repro_folders(root)
    if not folders:
        read_manifest(root)  # raises the one-line reason
    return [write_test(folder, dest_dir, with_injection) for folder in folders]


def render_test(manifest: dict, stem: str, ident: str, inputs_name: str | None, with_injection: bool,
                repro_dir: Path) -> str:
    injection = manifest.get("injection_source") if with_injection else ""
    isolate = manifest["kind"] in CRASHING or bool(injection)
    message = (manifest.get("message") or "").strip().splitlines()[:1]
    planted = ""
    if manifest.get("injections") and not with_injection:
        planted = ("The bug was planted (compiler.inject) when captured; this test does not plant it, so it\n"
                   "fails only while that injection is active in the process running it.\n")
    elif injection:
        planted = "The planted bug (compiler.inject) is part of this test: planted in a child process (this file run\n" \
                  "as a script), at the start of its __main__ block.\n"
    doc = (f"Regression test written by minify: {manifest['kind']} ({manifest.get('rung') or 'exception'}) at stage "
           f"{manifest['stage']}, from {manifest.get('source')}.\n\n"
           + (f"Observed: {message[0]}\n" if message else "")
           + "Fails while the bug exists (compiling or running fails, or the result differs from eager on\n"
           "the saved inputs, checked as repro.py checks it); passes once it is fixed.\n"
           + planted
           + f"Written from {repro_dir.resolve()} (torch {manifest.get('torch')}, device {manifest.get('device')}).\n"
           + (f"Needs torch, pytest and {inputs_name} beside it.\n" if inputs_name else "Needs torch and pytest.\n"))
    stdlib = sorted({"import subprocess", "import sys", *(manifest.get("stdlib_imports") or [])} - {
        "from pathlib import Path"}) + (["from pathlib import Path"] if inputs_name else [])
    lines = ['"""' + doc.replace('"""', "'''") + '"""',
             f"# minify-repro-id: {ident}", *stdlib, "",
             *manifest.get("imports", ["import torch"]),
             "import torch._functorch.config", "import torch._inductor.config", ""]
    if inputs_name:
        lines.append(f"INPUTS = Path(__file__).resolve().with_name({inputs_name!r})")
    lines += [f"CONFIG = {manifest.get('config') or {}!r}  # Inductor config the script changed: patched for the test",
              f"ISOLATE = {isolate!r}  # check in a child process (crashes, hangs, planted bugs)",
              "", "", manifest["function_source"].rstrip(), "", "", manifest["make_inputs_source"].rstrip(), "", "",
              manifest["check_source"].rstrip(), "", "",
              f"def {stem}():",
              "    if ISOLATE:  # this file, run as a script, in a child process",
              "        child = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=1800)",
              "        said = [x for x in child.stdout.splitlines() if x.startswith(('REPRODUCED', 'NOT REPRODUCED'))]",
              "        lines = said or (child.stdout + child.stderr).strip().splitlines()  # the verdict, not a warning",
              "        assert child.returncode == 0, lines[-1] if lines else f'exit status {child.returncode}'",
              "        return",
              "    torch._dynamo.reset()",
              "    with torch._inductor.config.patch({**CONFIG, 'fx_graph_cache': False}):",
              "        problem = check()",
              "    assert problem is None, problem",
              "", "",
              'if __name__ == "__main__":  # the child process of an isolated test',
              *(textwrap.indent(injection.rstrip(), "    ").splitlines() if injection else []),
              "    with torch._inductor.config.patch(CONFIG):",
              *["        " + line for line in (manifest.get("child_source") or "").rstrip().splitlines()],
              "        problem = check()",
              '    print(f"REPRODUCED: {problem}" if problem else "NOT REPRODUCED: compiled matches eager")',
              "    raise SystemExit(1 if problem else 0)"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """`minify test-from REPRO_DIR DIR`: one pytest file per repro folder under REPRO_DIR."""
    p = OneLineParser(prog="minify test-from", description="Write a pytest regression test from a "
                                "repro folder: it fails while the bug exists and passes once it is fixed.")
    p.add_argument("repro_dir", type=Path, help="a folder written by minify (its bug-N sub-folders count too)")
    p.add_argument("dest", type=Path, help="where to write the test (and the files it needs)")
    p.add_argument("--with-injection", action="store_true",
                   help="plant the captured compiler.inject bug inside the test (default: test the compiler as is)")
    ns = p.parse_args(argv)
    if ns.dest.exists() and not ns.dest.is_dir():
        print(f"minify: not a folder: {ns.dest}", file=sys.stderr)
        return 2
    try:
        paths = write_tests(ns.repro_dir, ns.dest, ns.with_injection)
    except (ReproFolderError, OSError) as exc:
        print(f"minify: {exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"wrote {path}")
    return 0
