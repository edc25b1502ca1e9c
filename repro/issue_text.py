"""issue.md: a paste-ready bug report in PyTorch's template, built from report.json and the repro.

PyTorch's bug template asks for two things: "🐛 Describe the bug" (what happens, with a
minimal repro inline) and "Versions". So issue.md holds what fails in two or three sentences,
repro.py verbatim, what `python repro.py` printed, the compiler part to blame in a few lines,
and the versions; under 3 KB for a one-op repro. The full story (every graph, stage verdicts,
divergent nodes, kernels, metrics) stays in report.json and report.html.
"""
from __future__ import annotations

import platform
from pathlib import Path

from repro.manifest import MANIFEST, ReproFolderError, read_manifest

ISSUE = "issue.md"
BLAME_LINES = 4  # rows of the blame table carried (the header and separator count)
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


def describe_bug(report: dict, manifest: dict) -> list[str]:
    failure = report.get("failure") or {}
    kind = failure.get("kind") or manifest.get("kind", "?")
    rung = failure.get("rung") or manifest.get("rung") or "exception"
    what = WHAT.get(kind if rung == "exception" else rung, kind)
    compile_kwargs = manifest.get("compile") or {"backend": "inductor"}
    ops = ", ".join(f"`{op}`" for op in report.get("ops") or [])
    call = ", ".join(f"{k}={v!r}" for k, v in compile_kwargs.items())
    text = [f"`torch.compile({call})` gives {what}{' in ' + ops if ops else ''}. The first compiler stage that "
            f"shows it is **{report.get('stage') or manifest.get('stage')}**. Found by "
            f"minify in graph {report.get('failing_graph')} of {report.get('graph_count')} "
            f"of `{Path(report.get('script') or '?').name}`, reduced from {report.get('ops_before')} to "
            f"{report.get('ops_after')} op(s)."]
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


def versions(manifest: dict) -> list[str]:
    lines = [f"torch {manifest.get('torch') or _torch_version()}, Python {manifest.get('python') or platform.python_version()}, "
             f"{manifest.get('platform') or platform.platform()}, device {manifest.get('device', 'cpu')}"]
    config = manifest.get("config") or {}
    if config:
        lines.append("Inductor config changed by the script: " +
                     ", ".join(f"`{k} = {v!r}`" for k, v in sorted(config.items())))
    return lines


def _torch_version() -> str:
    import torch

    return torch.__version__


def render_issue(report: dict, blame_lines: list[str] = ()) -> str:
    """`blame_lines`: the blame as markdown, from the caller (the blame search lives above this package)."""
    manifest, folder = _manifest(report)
    body = ["### 🐛 Describe the bug", "", "\n\n".join(describe_bug(report, manifest)), "",
            *repro_section(report, folder, manifest)]
    if blame_lines:
        shown = list(blame_lines[:BLAME_LINES])
        more = len(blame_lines) - len(shown)
        body += ["", "Blame (a switch tried on the repro, and what it did):", "", *shown]
        if more > 0:
            body.append(f"({more} more in report.json)")
    body += ["", "More (every graph, stage verdicts, kernels) in minify's `report.html` / `report.json`.", "",
             "### Versions", "", *versions(manifest)]
    return "\n".join(body) + "\n"


def write_issue(out_dir: Path, report: dict, blame_lines: list[str] = ()) -> Path:
    """Write OUT/issue.md for the run whose report.json is `report`; returns its path."""
    path = out_dir / ISSUE
    path.write_text(render_issue(report, blame_lines))
    return path
