"""issue.md: a paste-ready bug report in PyTorch's template, built from report.json and the repro.

PyTorch's bug template asks for a title, "🐛 Describe the bug" (what happens, with a minimal
repro inline and the error it gives) and "Versions" (`python -m torch.utils.collect_env`). So
issue.md holds a suggested title, what happens in one sentence, repro.py verbatim (its inputs
inline wherever they can be: nothing to attach), what `python repro.py` printed, the real error
text (the compiler's error lines, a trimmed traceback, a crash's standard error), the compiler
part to blame in words, and collect_env's report. The full story (every graph, stage verdicts,
divergent nodes, kernels, metrics) stays in report.json and report.html.
"""
from __future__ import annotations

import platform
from pathlib import Path

from compiler import gpu_gate
from compiler.custom_ops import carried_ops
from repro import error_text
from repro.manifest import MANIFEST, ReproFolderError, read_manifest
from repro.versions import collect_env

ISSUE = "issue.md"
BLAME_LINES = 3  # findings carried; the rest are in report.json
WHAT = {"values": "results that differ from eager", "nan_inf": "NaN/Inf where eager has numbers (or the reverse)",
        "exact": "values none of the op's inputs has", "signed_zero": "zeros of the other sign than eager's",
        "layout": "outputs with other strides than eager's", "meta": "another shape, dtype or device than eager",
        "bitwise": "other bits than eager", "compile_error": "an error while compiling",
        "runtime_error": "an error when the compiled code runs", "crash": "a crash", "hang": "a hang"}


def _manifest(report: dict) -> tuple[dict, Path | None]:
    folder = Path(report["repro"]).parent if report.get("repro") else None
    if folder is None or not (folder / MANIFEST).is_file():
        return {}, folder
    try:
        return read_manifest(folder), folder
    except ReproFolderError:
        return {}, folder


def _what(report: dict, manifest: dict) -> tuple[str, str]:
    failure = report.get("failure") or {}
    kind = failure.get("kind") or manifest.get("kind", "?")
    rung = failure.get("rung") or manifest.get("rung") or "exception"
    return kind, WHAT.get(kind if rung == "exception" else rung, kind)


def title(report: dict, manifest: dict) -> str:
    """A suggested issue title: the backend, the error's own words or what goes wrong, the op(s)."""
    kind, what = _what(report, manifest)
    backend = (manifest.get("compile") or {}).get("backend", "inductor")
    ops = ", ".join(report.get("ops") or [])
    message = ((report.get("failure") or {}).get("message") or manifest.get("message") or "").strip()
    first = message.splitlines()[0] if message else ""
    if kind == "crash" and first:
        text = f"[{backend}] crash in the compiled code{' of ' + ops if ops else ''}: {first}"
    elif kind in error_text.ERROR_KINDS and first:
        text = f"[{backend}] {first}" + (f" ({ops})" if ops else "")
    else:
        text = f"[{backend}] torch.compile gives {what}" + (f" for {ops}" if ops else "")
    return text if len(text) <= 150 else text[:text.rfind(" ", 0, 148)] + " …"


def describe_bug(report: dict, manifest: dict) -> list[str]:
    _, what = _what(report, manifest)
    compile_kwargs = manifest.get("compile") or {"backend": "inductor"}
    ops = ", ".join(f"`{op}`" for op in report.get("ops") or [])
    call = ", ".join(f"{k}={v!r}" for k, v in compile_kwargs.items())
    verdict = (report.get("verify_line") or "").partition(": ")[2] if report.get("verified") else ""
    text = [f"`torch.compile({call})` gives {what}{' in ' + ops if ops else ''}"
            + (f" ({verdict})." if verdict else "."),
            f"The first compiler stage that shows it is **{report.get('stage') or manifest.get('stage')}**; "
            f"minify found it in graph {report.get('failing_graph')} of {report.get('graph_count')} of "
            f"`{Path(report.get('script') or '?').name}` and reduced it from {report.get('ops_before')} to "
            f"{report.get('ops_after')} op(s)."]
    also = [f"graph {a['failing_graph']}" + (f" ({a['part']})" if a.get("part") else "") + " reduced to "
            + ", ".join(f"`{op}`" for op in a.get("ops") or []) for a in report.get("also_reduced") or []]
    if also:
        text.append(f"The same bug shows in {'; '.join(also)}: {report['also_reduced'][0]['why']} "
                    f"(one bug, reported once).")
    custom = carried_ops("\n".join(manifest.get("imports") or []))
    if custom:
        text.append(f"The repro calls the program's own custom op(s) {', '.join(f'`{op}`' for op in custom)}, defined "
                    f"inline; Inductor runs each as a fallback kernel calling its implementation. Check the op "
                    f"itself first (`torch.library.opcheck`): a wrong fake or mutates_args is the op's bug, not "
                    f"the compiler's.")
    if manifest.get("injections"):
        text.append("**Note:** planted on purpose through minify's injection API: a test of the tool, not a "
                    "PyTorch bug.")
    return text


def repro_section(report: dict, folder: Path | None, manifest: dict) -> list[str]:
    if folder is None or not (folder / "repro.py").is_file():
        return ["(no repro was written)"]
    lines = ["```python", (folder / "repro.py").read_text().rstrip(), "```"]
    if manifest.get("inputs_file"):
        lines += ["", f"It loads `{manifest['inputs_file']}` (attached; read with `weights_only=True`)."]
    if report.get("verify_line"):
        state = "" if report.get("verified") else " (in minify's fresh-process check it did NOT reproduce)"
        lines += ["", f"`python repro.py` prints{state}:", "```", report["verify_line"], "```"]
    return lines


def versions(manifest: dict, env: str | None = None) -> list[str]:
    """collect_env's report in a code block; where it could not run, the versions minify knows."""
    lines = ["```", env, "```"] if env else [
        f"torch {manifest.get('torch') or _torch_version()}, Python {manifest.get('python') or platform.python_version()}, "
        f"{manifest.get('platform') or platform.platform()}, device {manifest.get('device', 'cpu')} "
        f"(`python -m torch.utils.collect_env` could not run)"]
    config = manifest.get("config") or {}
    if config:
        lines.append("Inductor config changed by the script: " +
                     ", ".join(f"`{k} = {v!r}`" for k, v in sorted(config.items())))
    return lines


def _torch_version() -> str:
    import torch

    return torch.__version__


def error_section(lines: list[str]) -> list[str]:
    return ["", "The error it gives:", "```", *lines, "```"] if lines else []


def render_issue(report: dict, blame_lines: list[str] = (), env: str | None = None,
                 error: list[str] = ()) -> str:
    """`blame_lines`: the blame as markdown, from the caller (the blame search lives above this
    package); `env`: collect_env's report; `error`: the error text (repro.error_text)."""
    manifest, folder = _manifest(report)
    body = [f"Title: {title(report, manifest)}", "", "### 🐛 Describe the bug", "",
            "\n\n".join(describe_bug(report, manifest)), "", *repro_section(report, folder, manifest),
            *error_section(list(error))]
    if blame_lines:
        shown = list(blame_lines[:BLAME_LINES])
        more = len(blame_lines) - len(shown)
        body += ["", "What minify's blame search found (a part of the compiler switched on the repro, and what "
                 "that did):", "", *shown]
        if more > 0:
            body.append(f"- ({more} more in report.json)")
    body += ["", "More (every graph, stage verdicts, kernels) in minify's `report.html` / `report.json`.", "",
             "### Versions", "", *versions(manifest, env)]
    return "\n".join(body) + "\n"


def write_issue(out_dir: Path, report: dict, blame_lines: list[str] = (),
                run: "error_text.ErrorRun | None" = None) -> Path:
    """Write OUT/issue.md for the run whose report.json is `report`; returns its path. `run`: the
    repro's failing call run once more for its error text, started earlier; else started here."""
    manifest, folder = _manifest(report)
    with gpu_gate.for_job():  # on a GPU after an assert: alone, as every GPU job of the run
        if run is None and folder is not None:
            run = error_text.start(folder, manifest)
        error = run.lines() if run else []
    env = collect_env()
    path = out_dir / ISSUE
    path.write_text(render_issue(report, blame_lines, env, error))
    return path
