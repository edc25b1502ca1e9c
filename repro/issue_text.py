"""issue.md: a paste-ready bug report built from a minify run's report.json and its repro.

What fails, the environment, the repro inline (with the oracle sidecar folded below it, so
the text alone is enough to run it), observed vs expected with the oracle's metrics, and
where the failure was localized: which graph of how many, which stage, which ops.
"""
from __future__ import annotations

import platform
from pathlib import Path

from repro.manifest import MANIFEST, ReproFolderError, read_manifest

ISSUE = "issue.md"
METRIC_COLUMNS = ("max_abs_err", "max_rel_err", "mismatch_fraction", "max_ulp", "rmse_ratio", "why")
KIND_WORDS = {"accuracy": "gives results that differ from eager", "compile_error": "fails to compile",
              "runtime_error": "raises when the compiled code runs", "crash": "kills the process",
              "hang": "never finishes"}


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ") if value is not None else ""


def table(header: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]]


def _manifest(report: dict) -> tuple[dict, Path | None]:
    folder = Path(report["repro"]).parent if report.get("repro") else None
    if folder is None or not (folder / MANIFEST).is_file():
        return {}, folder
    try:
        return read_manifest(folder), folder
    except ReproFolderError:
        return {}, folder


def what_fails(report: dict, manifest: dict) -> list[str]:
    failure = report.get("failure") or {}
    kind, stage = failure.get("kind") or manifest.get("kind", "?"), report.get("stage") or manifest.get("stage")
    compile_kwargs = manifest.get("compile") or {"backend": "inductor"}
    ops = ", ".join(f"`{op}`" for op in report.get("ops") or [])
    text = [f"`torch.compile({', '.join(f'{k}={v!r}' for k, v in compile_kwargs.items())})` "
            f"{KIND_WORDS.get(kind, kind)} on graph {report.get('failing_graph')} of {report.get('graph_count')} "
            f"captured from `{Path(report.get('script') or '?').name}`. The first compiler stage that fails is "
            f"**{stage}** (stages before it match eager). minify reduced the graph from {report.get('ops_before')} "
            f"to {report.get('ops_after')} op(s){': ' + ops if ops else ''}."]
    if report.get("verify_line"):
        state = "reproduces" if report.get("verified") else "did NOT reproduce"
        text.append(f"The repro below {state} in a fresh process: `{report['verify_line']}`")
    if manifest.get("injections"):
        text.append("**Note:** this bug was planted on purpose through minify's injection API (the injection is "
                    "inline in the repro); it is a test of the tool, not a bug in PyTorch itself.")
    return text


def environment(manifest: dict) -> list[str]:
    lines = [f"- torch {manifest.get('torch') or _torch_version()}",
             f"- Python {manifest.get('python') or platform.python_version()}",
             f"- {manifest.get('platform') or platform.platform()}",
             f"- device: {manifest.get('device', 'cpu')}"]
    if manifest.get("compile"):
        lines.append(f"- compile call: `torch.compile(model, **{manifest['compile']!r})`")
    config = manifest.get("config") or {}
    lines.append("- Inductor config changed by the script: " +
                 (", ".join(f"`{k} = {v!r}`" for k, v in sorted(config.items())) or "none"))
    context = {k: v for k, v in (manifest.get("context") or {}).items() if k != "device"}
    if context:
        lines.append(f"- run context: {', '.join(f'{k}={v}' for k, v in context.items())}")
    return lines


def _torch_version() -> str:
    import torch

    return torch.__version__


def repro_section(folder: Path | None, manifest: dict) -> list[str]:
    if folder is None or not (folder / "repro.py").is_file():
        return ["(no repro was written)"]
    oracle = manifest.get("oracle_file")
    needs = [f"`{oracle}` (below)"] if oracle else []
    if manifest.get("inputs_file"):
        needs.append(f"`{manifest['inputs_file']}` (attached: the real inputs, loaded with `weights_only=True`)")
    lines = [f"Save as `repro.py` and run `python repro.py` (exit 1 and one line when it reproduces, 0 when not; "
             f"`--verbose` prints the metrics, `--device cuda` runs elsewhere)."
             + (f" It needs, beside it: {' and '.join(needs)}." if needs else ""),
             "", "```python", (folder / "repro.py").read_text().rstrip(), "```"]
    if oracle and (folder / oracle).is_file():
        lines += ["", f"<details><summary><code>{oracle}</code>: minify's oracle and runner "
                  f"(save beside repro.py)</summary>", "", "```python", (folder / oracle).read_text().rstrip(),
                  "```", "", "</details>"]
    return lines


def observed_expected(report: dict, manifest: dict) -> list[str]:
    failure = report.get("failure") or {}
    kind = failure.get("kind") or manifest.get("kind")
    observed = failure.get("message") or manifest.get("message") or ""
    lines = [f"**Observed** (original graph): {observed}", ""]
    final = report.get("final_metrics")
    if kind == "accuracy":
        lines.append(f"**Expected:** compiled outputs equal eager's within the oracle's tolerances "
                     f"({manifest.get('oracle_summary') or 'by dtype'}).")
    else:
        lines.append(f"**Expected:** the graph compiles and runs as it does in eager mode "
                     f"(stages before {report.get('stage')} do).")
    culprit = f" (at `{failure['culprit']}`, its first divergent node)" if failure.get("culprit") else ""
    for title, metrics in (("minimized repro", final), ("original graph" + culprit, failure.get("metrics"))):
        metrics = [metrics] if isinstance(metrics, dict) else [m for m in metrics or [] if isinstance(m, dict)]
        if metrics:
            columns = [c for c in METRIC_COLUMNS if any(c in m for m in metrics)]
            rows = [[m.get("output"), m.get("dtype"), m.get("shape"), *[m.get(c) for c in columns], m.get("ok")]
                    for m in metrics]
            lines += ["", f"Metrics of the {title}:", "", *table(["output", "dtype", "shape", *columns, "ok"], rows)]
    return lines


def localization(report: dict) -> list[str]:
    rows = [[g.get("index"), g.get("nodes"), "yes" if g.get("failing") else "no", g.get("kind") or "",
             g.get("message") or g.get("note") or ""] for g in report.get("graphs") or []]
    lines = [f"{report.get('graph_count', len(rows))} graph(s) captured:", "",
             *table(["graph", "FX nodes", "fails", "kind", "message"], rows), "",
             f"- failing graph: {report.get('failing_graph')}; first failing stage: {report.get('stage')}",
             f"- ops: {report.get('ops_before')} before reduction, {report.get('ops_after')} after: "
             f"{', '.join(report.get('ops') or [])}"]
    if report.get("first_divergent"):
        lines.append(f"- first node whose value diverges from eager: `{report['first_divergent']}`")
    others = (report.get("bugs") or [])[1:]
    if others:
        lines += ["", "Other distinct failures found in the same run (each has its own repro folder):", "",
                  *table(["graph", "stage", "kind", "message", "repro"],
                         [[b.get("failing_graph"), b.get("stage"), (b.get("failure") or {}).get("kind"),
                           (b.get("failure") or {}).get("message"), b.get("repro", "(not reduced)")] for b in others])]
    return lines


def render_issue(report: dict, blame_lines: list[str] = ()) -> str:
    """`blame_lines`: the blame as markdown, from the caller (the blame search lives above this package)."""
    manifest, folder = _manifest(report)
    failure = report.get("failure") or {}
    kind = failure.get("kind") or manifest.get("kind", "failure")
    ops = ", ".join(report.get("ops") or [])
    title = f"torch.compile {report.get('stage') or manifest.get('stage')}: {kind}" + (f" in {ops}" if ops else "")
    message = (failure.get("message") or manifest.get("message") or "").strip().splitlines()
    sections = [[f"# {title}" + (f": {message[0][:120]}" if message else "")],
                ["## What fails", "", "\n\n".join(what_fails(report, manifest))],
                ["## Environment", "", *environment(manifest)],
                ["## Repro", "", *repro_section(folder, manifest)],
                ["## Observed vs expected", "", *observed_expected(report, manifest)],
                ["## Localization", "", *localization(report)],
                *([["## Where in the compiler", "", *blame_lines]] if blame_lines else []),
                ["_Written by minify._"]]
    return "\n\n".join("\n".join(s) for s in sections) + "\n"


def write_issue(out_dir: Path, report: dict, blame_lines: list[str] = ()) -> Path:
    """Write OUT/issue.md for the run whose report.json is `report`; returns its path."""
    path = out_dir / ISSUE
    path.write_text(render_issue(report, blame_lines))
    return path
