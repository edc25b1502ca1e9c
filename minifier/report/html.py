"""report.html: one self-contained page (no network, no scripts from elsewhere) that shows
where the failure is: the graphs table, the failing graph drawn as SVG with each node
colored by its error against eager (the first divergent node outlined, each node linked to
the kernel that computes it), the kernels' generated code, and the minimized repro.

The drawing is a plain layered layout computed here: an op sits one layer below the
deepest op it reads, inputs just above their first reader, and each layer is ordered by
the mean position of what its nodes read (two sweeps), which keeps most edges short.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

from minifier.report import html_sections as sections
from minifier.report import numerics

NODE_H, LAYER_GAP, NODE_GAP, MARGIN = 34, 54, 14, 20
STATUS_COLORS = {"input": "#dbe9f6", "ok": "#cdebd3", "unobserved": "#e6e6e6", "unknown": "#f4f4f4"}
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px;margin:0 0 6px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px} table{border-collapse:collapse;font-size:13px;margin:6px 0}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top} th{background:#f3f3f3}
tr.failing td{background:#fdecec} .bad{color:#b00020;font-weight:600} .good{color:#1b7a33;font-weight:600}
pre{background:#f7f7f7;border:1px solid #e2e2e2;padding:10px;overflow:auto;font-size:12px;max-height:520px}
.svgbox{overflow-x:auto;border:1px solid #ddd;background:#fff} tr.kept td{background:#fff6de}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border:1px solid #999;font-size:12px}
details{margin:4px 0} details:target>summary,details.hit>summary{background:#fff3b0}
summary{cursor:pointer;font-family:monospace;font-size:13px} code{font-size:12px}
.muted{color:#666;font-size:13px}
svg text{font-family:monospace;font-size:11px} svg a:hover rect{stroke:#000;stroke-width:2}
"""
# Opens the kernel a node links to (a closed <details> would hide it); inline, nothing fetched.
SCRIPT = """
function openTarget(){var e=document.getElementById(decodeURIComponent(location.hash.slice(1)));
if(e&&e.tagName==='DETAILS'){e.open=true;e.classList.add('hit');}}
window.addEventListener('hashchange',openTarget);window.addEventListener('load',openTarget);
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def anchor(graph: int, kernel: str) -> str:
    return f"g{graph}-kernel-" + re.sub(r"[^A-Za-z0-9_-]", "-", kernel)


def _color(node: dict, kept: set[str] = frozenset()) -> str:
    if node["name"] in kept and node["status"] != "diverges":
        return sections.KEPT_FILL
    if node["status"] != "diverges":
        return STATUS_COLORS.get(node["status"], "#f4f4f4")
    severity = min(1.0, max(0.05, float(node["metrics"].get("mismatch_fraction") or 1.0)))
    return f"hsl(0,75%,{88 - 26 * severity:.0f}%)"


def layout(nodes: list[dict]) -> dict[str, tuple[float, float, float]]:
    """name -> (x, y, width) of each node's box."""
    by_name = {n["name"]: n for n in nodes}
    layer: dict[str, int] = {}
    for n in nodes:
        if n["status"] != "input":
            layer[n["name"]] = 1 + max([layer[i] for i in n["inputs"] if i in layer] or [0])
    users: dict[str, list[str]] = {}
    for n in nodes:
        for i in n["inputs"]:
            users.setdefault(i, []).append(n["name"])
    for n in nodes:
        if n["status"] == "input":
            layer[n["name"]] = max(0, min([layer[u] for u in users.get(n["name"], []) if u in layer] or [1]) - 1)
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n["name"]], []).append(n["name"])
    width = {name: max(96, 7 * max(len(name), len(by_name[name]["op"])) + 18) for name in by_name}
    pos: dict[str, float] = {}

    def place(row: list[str]) -> None:
        x = 0.0
        for name in row:
            pos[name] = x + width[name] / 2
            x += width[name] + NODE_GAP

    for depth in sorted(rows):
        place(rows[depth])
    for _ in range(2):  # order each layer by where its nodes' inputs (then users) sit
        for depth in sorted(rows):
            rows[depth].sort(key=lambda m: _mean([pos[i] for i in by_name[m]["inputs"] if i in pos], pos[m]))
            place(rows[depth])
        for depth in sorted(rows, reverse=True):
            if any(by_name[m]["status"] == "input" for m in rows[depth]):
                rows[depth].sort(key=lambda m: _mean([pos[u] for u in users.get(m, []) if u in pos], pos[m]))
                place(rows[depth])
    widest = max((sum(width[m] + NODE_GAP for m in row) for row in rows.values()), default=0)
    boxes = {}
    for depth, row in rows.items():
        shift = (widest - sum(width[m] + NODE_GAP for m in row)) / 2 + MARGIN
        for name in row:
            boxes[name] = (pos[name] - width[name] / 2 + shift, MARGIN + depth * (NODE_H + LAYER_GAP), width[name])
    return boxes


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default


def graph_svg(loc: dict, outlined: set[str] = frozenset(), kept: set[str] = frozenset()) -> str:
    """The graph drawn: `outlined` nodes (the culprit) in red, `kept` (the repro's op kinds) filled."""
    nodes = [n for n in loc["nodes"]]
    boxes = layout(nodes)
    width = max((x + w for x, _, w in boxes.values()), default=200) + MARGIN
    height = max((y for _, y, _ in boxes.values()), default=0) + NODE_H + MARGIN
    parts = [f'<svg width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="graph {loc["graph"]}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#999"/></marker></defs>']
    for n in nodes:
        x2, y2, w2 = boxes[n["name"]]
        for i in n["inputs"]:
            if i not in boxes:
                continue
            x1, y1, w1 = boxes[i]
            sx, sy, tx, ty = x1 + w1 / 2, y1 + NODE_H, x2 + w2 / 2, y2
            mid = (sy + ty) / 2
            parts.append(f'<path d="M{sx:.1f},{sy:.1f} C{sx:.1f},{mid:.1f} {tx:.1f},{mid:.1f} {tx:.1f},{ty - 2:.1f}" '
                         f'fill="none" stroke="#aaa" stroke-width="1" marker-end="url(#arrow)"/>')
    for n in nodes:
        x, y, w = boxes[n["name"]]
        root = n.get("first_divergent") or n["name"] in outlined
        stroke = sections.CULPRIT_STROKE if root else 'stroke="#777" stroke-width="1"'
        box = (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.0f}" height="{NODE_H}" rx="5" fill="{_color(n, kept)}" {stroke}/>'
               f'<text x="{x + w / 2:.1f}" y="{y + 14:.1f}" text-anchor="middle" font-weight="bold">{_e(n["name"])}</text>'
               f'<text x="{x + w / 2:.1f}" y="{y + 27:.1f}" text-anchor="middle" fill="#444">{_e(n["op"])}</text>')
        title = f"<title>{_e(_tooltip(n))}</title>"
        if n["kernels"]:
            parts.append(f'<a href="#{anchor(loc["graph"], n["kernels"][0])}" id="g{loc["graph"]}-node-{_e(n["name"])}">'
                         f'{title}{box}</a>')
        else:
            parts.append(f'<g id="g{loc["graph"]}-node-{_e(n["name"])}">{title}{box}</g>')
    parts.append("</svg>")
    return "\n".join(parts)


def _tooltip(n: dict) -> str:
    lines = [f"{n['name']} = {n['op']}  [{n['status']}{', FIRST DIVERGENT' if n.get('first_divergent') else ''}]"]
    lines += [f"{k}: {_fmt(v)}" for k, v in n["metrics"].items()]
    lines.append(_origin_text(n))
    if n["kernels"]:
        lines.append("kernels: " + ", ".join(n["kernels"]))
    return "\n".join(x for x in lines if x)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _origin_text(n: dict) -> str:
    o = n.get("origin")
    where = f"{Path(o['file']).name}:{o['line']}  {o['code']}" if o else ""
    if n.get("module"):
        where = f"{where}  in {n['module']}".strip()
    if n.get("gradient_of"):
        where = f"gradient of {n['gradient_of']}" + (f" ({where})" if where else "")
    return where


def _table(headers: list[str], rows: list[list[str]], classes: list[str] | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(f'<tr class="{c}">' + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row, c in zip(rows, classes or [""] * len(rows)))
    return f"<table><tr>{head}</tr>{body}</table>"


def _graphs_section(report: dict) -> str:
    rows, classes = [], []
    together = set((report.get("interaction") or {}).get("graphs") or [])
    for g in report.get("graphs", []):
        stages = g.get("stages") or {}
        verdicts = ", ".join(f"{s}: {v}" for s, v in stages.items()) or _e(g.get("verdict") or "")
        rows.append([_e(g["index"]), _e(g.get("key", g["index"])), _e(g.get("part", "forward")),
                     _e(g.get("dynamo_graph", g["index"])), _e(g["nodes"]), _e(verdicts),
                     '<span class="bad">yes</span>' if g.get("failing") else
                     '<span class="bad">with the others marked</span>' if g["index"] in together else "",
                     _e(g.get("kind") or ""), _e(g.get("message") or g.get("note") or "")])
        classes.append("failing" if g.get("failing") or g["index"] in together else "")
    return "<h2>Graphs</h2>" + _table(["index", "key", "part", "Dynamo graph", "nodes", "stage verdicts", "failing",
                                        "kind", "message"], rows, classes)


def _summary(report: dict) -> str:
    failure = report.get("failure") or {}
    items = [("script", report.get("script", "")), ("status", report.get("status", ""))]
    if failure:
        items += [("failure", f"{failure.get('kind')}: {failure.get('message')}"),
                  *([("oracle check", failure["rung"])] if failure.get("rung") else []),
                  ("stage", report.get("stage", "")),
                  ("Inductor bug", {True: "yes", False: "no: it fails before Inductor"}.get(report.get("inductor_bug"),
                                                                                            "?")),
                  ("failing graph", report.get("failing_graph"))]
    items += [(f"time: {name}", f"{seconds:.1f} s") for name, seconds in (report.get("phases") or {}).items()]
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in items) + "</table>"


def _interaction_section(report: dict) -> str:
    inter = report.get("interaction")
    if not inter:
        return ""
    e2e = inter["end_to_end"]
    runs = _table(["graphs compiled", "program"],
                  [[_e(", ".join(r["keys"]) or "(none)"), '<span class="bad">fails</span>' if r["fails"] else "passes"]
                   for r in inter["runs"]])
    return (f"<h2>Graphs that fail only together</h2><p>No graph fails on its own, but the program does: "
            f"{_e(e2e['message'])}. The failure needs these graphs compiled together (the others eager): "
            f"<b>{_e(', '.join(map(str, inter['graphs'])) or 'none found')}</b> "
            f"(keys {_e(', '.join(inter['keys']))}).</p><p class='muted'>{_e(inter['note'])}</p>{runs}")


def _program_section(report: dict) -> str:
    """The layer the program-level stage ladder blamed, and the reduced program."""
    program, layer = report.get("program"), report.get("layer") or {}
    if not program:
        return ""
    rungs = _table(["backend", "program"], [[_e(r["backend"]), '<span class="bad">fails</span>' if r["fails"]
                                             else "passes"] for r in layer.get("runs", [])])
    code = _e(Path(program["repro"]).read_text()) if program.get("repro") else _e(program.get("message", ""))
    return (f"<h2>A failure of the whole program: {_e(layer.get('name', ''))}</h2>"
            f"<p>{_e(program.get('signature') or '')}. Reduced {program.get('lines_before')} -> "
            f"{program.get('lines_after')} lines in {program.get('runs')} runs; verified: "
            f"{'yes' if program.get('verified') else 'no'}.</p>{rungs}<pre>{code}</pre>")


def _localization_section(loc: dict, bugs: list[dict]) -> str:
    g = loc["graph"]
    if "error" in loc:
        return f"<h2>Graph {g}</h2><p class='muted'>Could not localize: {_e(loc['error'])}</p>"
    out = [f"<h2>Graph {g} ({_e(loc['part'])}): where it fails</h2>",
           "<p>" + ", ".join(f"{_e(s)}: <b>{_e(v)}</b>" for s, v in loc["stages"].items()) + "</p>"]
    if loc.get("piece"):
        out.append(f"<p>In the piece of the graph that fails alone ({_e(loc['piece'])}, fed with eager values): "
                   f"the stages and nodes below are that piece's.</p>")
    if loc.get("observation"):
        out.append(f"<p class='muted'>Observed by {_e(loc['observation'])}.</p>")
    out.append('<p class="legend"><span style="background:#dbe9f6">input</span><span style="background:#cdebd3">'
               'matches eager</span><span style="background:hsl(0,75%,60%)">diverges (darker: more elements '
               'differ)</span><span style="background:#e6e6e6">not observed</span><span style="border:3px solid '
               '#b00020">culprit (first divergent, or the op the failure names)</span><span style="background:'
               f'{sections.KEPT_FILL}">an op of the kind the repro kept</span> Click a node for the kernel that '
               'computes it.</p>')
    out.append(sections.culprit_line(loc, bugs))
    out.append(f'<div class="svgbox">{graph_svg(loc, *sections.culprits(loc, bugs))}</div>')
    if loc["first_divergent"]:
        rows = [[f'<a href="#g{g}-node-{_e(d["name"])}">{_e(d["name"])}</a>', _e(d["op"]),
                 _e(", ".join(f"{k}={_fmt(v)}" for k, v in d["metrics"].items())), _e(_origin_text(d)),
                 " ".join(f'<a href="#{anchor(g, k["name"])}">{_e(k["name"])}</a>' for k in d["kernels"])
                 or "no kernel of its own (a view, or folded into its users)"]
                for d in loc["first_divergent"]]
        out.append("<h3>First divergent node(s)</h3>" + _table(["node", "op", "error vs eager", "origin", "kernel"],
                                                                 rows))
    if loc.get("bracket"):
        b = loc["bracket"]
        out.append(f"<h3>Bracketed</h3><p>The graph's first {b['prefix_ops']} of {b['of']} ops fail, ending at "
                   f"<b>{_e(b['fails_with_ops_up_to'])}</b>; with one op fewer (up to "
                   f"{_e(b['passes_with_ops_up_to'])}) they pass.</p>")
    if loc["unobserved"]:
        rows = [[_e(u["node"]), _e(u["op"]), _e(", ".join(u["after_ok"] + u["after_diverging"])),
                 _e(", ".join(u["before_ok"] + u["before_diverging"])), _e(u["why"])] for u in loc["unobserved"]]
        out.append("<h3>Not observed</h3>" + _table(["node", "op", "after (observed)", "before (observed)", "why"],
                                                    rows))
    if loc["kernels"]:
        roots = {k["name"]: k.get("source") for d in loc["first_divergent"] for k in d["kernels"]}
        out.append("<h3>Generated kernels</h3>")
        for k in loc["kernels"]:
            source = k.get("source") or roots.get(k["name"]) or "(source not kept)"
            out.append(f'<details id="{anchor(g, k["name"])}"{" open" if k["name"] in roots else ""}><summary>'
                       f'{_e(k["name"])} ({_e(k["kind"])}): {_e(", ".join(k["nodes"]))}</summary>'
                       f'<pre>{_e(source)}</pre></details>')
    elif loc.get("kernel_error"):
        out.append(f"<p class='muted'>No generated code: {_e(loc['kernel_error'])}</p>")
    return "\n".join(out)


def _repro_section(report: dict) -> str:
    out = []
    for i, bug in enumerate(report.get("bugs") or ([report] if report.get("repro") else []), 1):
        path = bug.get("repro")
        if not path or not Path(path).exists():
            continue
        state = {True: "verified in a fresh process", False: "NOT verified"}.get(bug.get("verified"), "not verified")
        out.append(f"<h2 id='repro-{i}'>Minimized repro {i}: {_e(path)} ({_e(state)})</h2>"
                   f"<pre>{_e(Path(path).read_text())}</pre>")
        for k in bug.get("kernels") or []:
            out.append(f"<details><summary>kernel of the repro: {_e(k['name'])}</summary>"
                       f"<pre>{_e(k['source'])}</pre></details>")
    return "\n".join(out)


def render(report: dict, localizations: list[dict], timeline: list[dict] | None = None) -> str:
    body = ["<h1>minify report</h1>", _summary(report), sections.blame_section(report),
            sections.reduction_section(report), sections.timeline_section(timeline), _graphs_section(report),
            _interaction_section(report), _program_section(report), numerics.html_section(report)]
    body += [_localization_section(loc, sections.bugs_of(report, loc["graph"])) for loc in localizations]
    body.append(_repro_section(report))
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>minify report</title>"
            f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>{''.join(body)}</body></html>")


def write_html(out: Path, report: dict, localizations: list[dict], timeline: list[dict] | None = None) -> Path:
    """OUT/report.html; the timeline's rows are the pool's (work/timeline.json where none are given)."""
    path = out / "report.html"
    if timeline is None and (out / "work" / "timeline.json").exists():
        timeline = json.loads((out / "work" / "timeline.json").read_text())
    path.write_text(render(report, localizations, timeline), encoding="utf-8")
    return path
