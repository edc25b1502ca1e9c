"""The numerics verdict: the program's results change under torch.compile, but not because a graph
is miscompiled.

It is given when the program fails end to end only compiled (a script that compares compiled
with eager bit for bit raises, or a compiled function's first outputs differ), compiling one
graph alone is enough for that, and that graph passes the oracle's ladder on its own inputs
while its outputs still differ from eager: within tolerance, as close to the fp64 reference as
eager or closer, NaN/Inf where fp64 has them too, or a NaN of the other sign. Such a failure
needs no second graph, so it is not an interaction, and there is nothing to reduce: the report
shows the numbers (compiled's and eager's max error against fp64, absolute, in ulps,
relative) instead of a repro.

A compiler setting that makes compiled match eager bit for bit on that graph is named only
when a worker saw it do so (minifier.localize.numerics_hints).
"""
from __future__ import annotations


VERDICT = "numerics, not a miscompile"


def is_numerics(verdict: dict) -> bool:
    """A capture verdict that passes the ladder although the outputs differ from eager."""
    return (verdict.get("status") == "pass" and verdict.get("kind") == "numerics") or \
        (verdict.get("status") == "invalid" and verdict.get("kind") == "fp_noise")


def evidence(verdict: dict) -> list[str]:
    from compiler.oracle import numerics_lines

    return numerics_lines(verdict.get("metrics") or []) or [verdict.get("message") or ""]


def verdict(record, e2e_message: str, hints: list[dict]) -> dict:
    """report.json's `numerics` entry for graph `record`."""
    seen = record.record.get("verdict") or {}
    return {"verdict": VERDICT, "graph": record.index, "key": record.key, "end_to_end": e2e_message,
            "evidence": evidence(seen), "metrics": seen.get("metrics") or [], "reference": seen.get("reference"),
            "hints": hints}


def console_rows(numerics: dict) -> list[tuple[str, str]]:
    rows = [("verdict", VERDICT),  # plain text: the console shows it bold
            ("end to end", numerics["end_to_end"]),
            ("graph", f"{numerics['graph']}: compiling it alone changes the program's result, and it passes every "
                      f"check of the oracle against eager")]
    rows += [("evidence", line) for line in numerics["evidence"]]
    rows += [("hint", hint["text"]) for hint in numerics["hints"]]
    if not any(hint["config"] != "tf32" for hint in numerics["hints"]):
        rows.append(("hint", "no compiler setting tried (emulate_precision_casts) made compiled match eager"))
    return rows


def html_section(report: dict) -> str:
    from html import escape

    numerics = report.get("numerics")
    if not numerics:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in numerics["evidence"] + [h["text"] for h in numerics["hints"]])
    return (f"<h2>Verdict: {escape(VERDICT)}</h2><p>{escape(numerics['end_to_end'])}. Compiling graph "
            f"{numerics['graph']} alone is enough, and that graph passes every check of the oracle against eager: "
            f"its outputs differ from eager only by floating-point numerics.</p><ul>{items}</ul>")
