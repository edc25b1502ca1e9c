"""The bench table: one row a case, its expected answer next to what minify answered."""
from __future__ import annotations

from minifier.bench.score import Row

COLUMNS = ["case", "kind", "expected", "got", "graph", "stage", "culprit in repro", "verified", "ops (final/min)",
           "compiles", "wall s", "to repro s"]
BUILTIN_COLUMNS = ["built-in wall s", "built-in queries", "built-in ops", "built-in reproduces", "wall ratio",
                   "compile ratio", "to repro / built-in"]


def _mark(value) -> str:
    return "-" if value is None else ("[green]yes[/green]" if value else "[red]no[/red]")


def _got(r: Row) -> str:
    """What minify answered: its exit status, green when that is the expected answer."""
    if r.exit_code is None:
        return "-"
    text = f"exit {r.exit_code}"
    if r.nothing_expected:
        text += ", nothing failed" if r.correct else f" ({r.note})" if r.note else ""
    return f"[green]{text}[/green]" if r.correct else f"[red]{text}[/red]"


def _minify_cells(r: Row) -> list[str]:
    cells = [r.name, r.kind, "nothing fails (exit 3)" if r.nothing_expected else "repro (exit 0)", _got(r)]
    if r.nothing_expected:  # no repro: the repro columns do not apply
        return cells + [_mark(r.graph_ok), "-", "-", "-", "-", f"{r.compiles if r.compiles is not None else '-'}",
                        f"{r.wall or ''}", "-"]
    if r.note and r.graph_ok is None:
        return cells + [f"[yellow]{r.note}[/yellow]", "", "", "", "", "", f"{r.wall or ''}", ""]
    return cells + [_mark(r.graph_ok), _mark(r.stage_ok), _mark(r.culprit_ok), _mark(r.verified),
                    f"{r.ops_after}/{r.min_ops}", f"{r.compiles}", f"{r.wall}", f"{r.to_repro or ''}"]


def _builtin_cells(r: Row) -> list[str]:
    b = r.builtin or {}
    ratio = (f"{b['seconds'] / r.wall:.1f}x" if b.get("seconds") and r.wall else "-")
    cratio = (f"{b['queries'] / r.compiles:.1f}x" if b.get("queries") and r.compiles else "-")
    # the measure: minify's time to a verified repro as a fraction of the built-in's time
    fraction = f"{r.to_repro / b['seconds']:.2f}x" if b.get("seconds") and r.to_repro else "-"
    return [f"{b.get('seconds', '-')}", f"{b.get('queries', '-')}",
            f"{b.get('ops_after', '-')}" if b.get("outcome") == "ok" else f"[yellow]{b.get('outcome', '-')}[/yellow]",
            _mark(b.get("reproduces")), ratio, cratio, fraction]


def print_table(rows: list[Row], console, vs_builtin: bool) -> None:
    from rich.table import Table

    table = Table(title="minify bench")
    for col in COLUMNS + (BUILTIN_COLUMNS if vs_builtin else []):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*_minify_cells(r), *(_builtin_cells(r) if vs_builtin else []))
    console.print(table)
