"""report.html's account of the run beside the graph: the culprit of each bug whatever its kind
(the node that diverged, the node the error names, or the op the reduction kept), the reduction
(ops before and after, per pass), the blame in words, and the run's timeline drawn as SVG, one
bar per job on its worker's row."""
from __future__ import annotations

import html

KEPT_FILL = "#ffd27a"  # a node of the kind the repro kept (a crash, an error: nothing diverged to color)
CULPRIT_STROKE = 'stroke="#b00020" stroke-width="4"'
TIMELINE_COLORS = {"pass": "#7fbf8e", "fail": "#e07a7a", "ok": "#8fb3d9", "ready": "#cccccc"}
LANE_H, BAR_H, LABEL_W, PLOT_W = 22, 16, 90, 1100


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def bugs_of(report: dict, graph: int) -> list[dict]:
    """The bugs found in graph `graph` (a report of one bug is its own bug), with the findings
    there folded into a bug found in another graph (minifier.report.same_bug)."""
    bugs = report.get("bugs") or ([report] if report.get("failure") else [])
    return [b for b in bugs if b.get("failing_graph", graph) == graph] + \
        [a for b in bugs for a in b.get("also_reduced") or [] if a.get("failing_graph") == graph]


def culprits(loc: dict, bugs: list[dict]) -> tuple[set[str], set[str]]:
    """(nodes to outline as the culprit, nodes to fill as of the kind the repro kept) of a
    localized graph. The culprit: the first divergent node(s) (accuracy), else the node the
    failure names; else, where one node of the graph has the op the repro kept, that node.
    Several nodes of the kept op's kind are filled, none outlined: which one is not known."""
    names = {n["name"] for n in loc.get("nodes") or []}
    outlined = {d["name"] for d in loc.get("first_divergent") or []}
    outlined |= {b["failure"]["culprit"] for b in bugs if (b.get("failure") or {}).get("culprit") in names}
    kept_ops = {op for b in bugs for op in b.get("ops") or []}
    kept = {n["name"] for n in loc.get("nodes") or [] if n["status"] != "input" and n["op"] in kept_ops}
    if not outlined and len(kept) == 1:
        outlined = set(kept)
    return outlined, kept


def culprit_line(loc: dict, bugs: list[dict]) -> str:
    """The culprit in words, above the drawing."""
    outlined, kept = culprits(loc, bugs)
    ops = sorted({op for b in bugs for op in b.get("ops") or []})
    words = []
    if outlined:
        words.append("the culprit (outlined in red): <b>" + ", ".join(map(_e, sorted(outlined))) + "</b>")
    if ops:
        where = f"; nodes of that kind are filled amber ({', '.join(map(_e, sorted(kept)))})" if kept else ""
        words.append(f"the repro kept {len(ops)} op kind(s): <b>{_e(', '.join(ops))}</b>{where}")
    return f"<p>{'; '.join(words)}.</p>" if words else ""


def reduction_section(report: dict) -> str:
    """Per bug: ops before and after, the ops kept, and what each pass ran, compiled and kept."""
    bugs = report.get("bugs") or ([report] if report.get("failure") else [])
    out = []
    for i, bug in enumerate(bugs, 1):
        if "ops_after" not in bug:
            continue
        passes = bug.get("passes") or {}
        rows = "".join(f"<tr{' class=kept' if p.get('successes') else ''}><td>{_e(name)}</td><td>{p.get('runs', 0)}"
                       f"</td><td>{p.get('compiles', 0)}</td><td>{p.get('successes', 0)}</td></tr>"
                       for name, p in passes.items())
        table = (f"<table><tr><th>pass</th><th>runs</th><th>compiles</th><th>smaller graphs kept</th></tr>{rows}"
                 f"</table>") if rows else ""
        stopped = f" (stopped early: {_e(bug['stopped'])})" if bug.get("stopped") else ""
        out.append(f"<h3>Bug {i}: {bug['ops_before']} ops \u2192 {bug['ops_after']} "
                   f"({_e(', '.join(bug.get('ops') or []))}){stopped}</h3>{table}")
    return "<h2>Reduction</h2>" + "".join(out) if out else ""


def blame_section(report: dict) -> str:
    """What part of the compiler is to blame, in words (minifier.report.blame's lines)."""
    from minifier.report.blame import blame_lines

    bugs = report.get("bugs") or ([report] if report.get("failure") else [])
    out = []
    for i, bug in enumerate(bugs, 1):
        if "blame" not in bug:
            continue
        lines = blame_lines(bug["blame"] or [])
        items = "".join(f"<li>{_e(line)}</li>" for line in lines) or \
            "<li>no single switch tried made the failure go away: no part of the compiler could be blamed</li>"
        out.append(f"<h3>Bug {i}</h3><ul>{items}</ul>")
    return "<h2>Blame</h2>" + "".join(out) if out else ""


def timeline_svg(rows: list[dict]) -> str:
    """One bar per job: its worker's row, from its start for its seconds (the capture on a row
    of its own); the bar's title says what it was."""
    rows = [r for r in rows if isinstance(r.get("start"), (int, float)) and isinstance(r.get("seconds"), (int, float))]
    if not rows:
        return ""
    lanes = sorted({r.get("worker") or r.get("op") or "?" for r in rows}, key=lambda w: (w != "capture", w))
    first = min(r["start"] for r in rows)
    span = max(r["start"] + r["seconds"] for r in rows) - first or 1.0
    scale = PLOT_W / span
    height = LANE_H * len(lanes) + 30
    parts = [f'<svg class="timeline" width="{LABEL_W + PLOT_W + 20}" height="{height}" role="img" '
             f'aria-label="timeline">']
    for i, lane in enumerate(lanes):
        parts.append(f'<text x="4" y="{i * LANE_H + 15}">{_e(lane)}</text>')
    for r in rows:
        lane = lanes.index(r.get("worker") or r.get("op") or "?")
        x, w = LABEL_W + (r["start"] - first) * scale, max(1.5, r["seconds"] * scale)
        color = TIMELINE_COLORS.get(r.get("status"), "#b9a3d6")
        what = " ".join(str(v) for v in (r.get("op"), r.get("stage")) if v)
        parts.append(f'<rect class="job" x="{x:.1f}" y="{lane * LANE_H + 3}" width="{w:.1f}" height="{BAR_H}" '
                     f'fill="{color}" stroke="#555" stroke-width="0.5"><title>{_e(what)}: {_e(r.get("status"))}, '
                     f'{r["seconds"]:.2f} s from {r["start"]:.2f} s</title></rect>')
    for tick in range(0, int(span) + 1, max(1, int(span // 10) or 1)):
        x = LABEL_W + tick * scale
        parts.append(f'<text x="{x:.1f}" y="{height - 6}" fill="#666">{tick + first:.0f}s</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def timeline_section(rows: list[dict] | None) -> str:
    svg = timeline_svg(rows or [])
    if not svg:
        return ""
    legend = "".join(f'<span style="background:{c}">{s}</span>' for s, c in TIMELINE_COLORS.items())
    return (f"<h2>Timeline</h2><p class='muted'>One bar per job, a row per worker (seconds since the workers "
            f"started; hover a bar for what it was).</p><p class='legend'>{legend}</p>"
            f"<div class='svgbox'>{svg}</div>")
