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

A compiler setting that makes compiled match eager bit for bit on that graph (Inductor's
`emulate_precision_casts`, which keeps eager's fp16/bf16 rounding between fused ops, or
Triton's fp32 upcast) is tried on the graph's recorded inputs, and named only when it did.
"""
from __future__ import annotations

from pathlib import Path

# Settings that trade Inductor's numerics for eager's: {config key: value to try, devices}.
HINTS = {
    "emulate_precision_casts": (True, ("cpu", "cuda", "xpu")),
    "triton.codegen_upcast_to_fp32": (False, ("cuda", "xpu")),
}
VERDICT = "numerics, not a miscompile"


def is_numerics(verdict: dict) -> bool:
    """A capture verdict that passes the ladder although the outputs differ from eager."""
    return (verdict.get("status") == "pass" and verdict.get("kind") == "numerics") or \
        (verdict.get("status") == "invalid" and verdict.get("kind") == "fp_noise")


def evidence(verdict: dict) -> list[str]:
    from compiler.oracle import numerics_lines

    return numerics_lines(verdict.get("metrics") or []) or [verdict.get("message") or ""]


def verified_hints(record, pool, work: Path, say=lambda text: None) -> list[dict]:
    """The settings of HINTS under which the graph's compiled outputs equal eager's bit for bit,
    each checked on the graph's recorded inputs by a worker."""
    import torch

    from compiler.context import graph_modes
    from compiler.stages import CompileSpec
    from compiler.subsystems import config_defaults
    from minifier.pipeline import load_graph, record_values
    from minifier.workers.evaluate import Evaluator

    gm, inputs = load_graph(record)
    spec, context = CompileSpec.from_dict(record.record["spec"]), record.record.get("context") or {}
    device = next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")
    defaults = config_defaults()
    tries = {key: value for key, (value, devices) in HINTS.items()
             if device in devices and key in defaults and spec.config.get(key, defaults[key]) != value}
    if not tries:
        return []
    case_dir = work / "cases" / f"numerics_{record.index}"
    case_dir.mkdir(parents=True, exist_ok=True)
    with graph_modes(context, spec.grad_enabled, inputs, only_autocast=True):
        torch.save(record_values(gm, inputs), case_dir / "values.pt")
    hints = []
    for key, value in tries.items():
        say(f"graph {record.index}: does {key} = {value!r} make compiled match eager?")
        tried = CompileSpec.from_dict({**spec.to_dict(), "config": {**spec.config, key: value}})
        ev = Evaluator(pool, case_dir, tried, record.record.get("injections") or [], signature="", context=context)
        answer = ev.outcomes([gm])[0]
        if answer.get("status") == "pass" and not answer.get("kind"):
            hints.append({"config": key, "value": value,
                          "text": f"with torch._inductor.config.{key} = {value!r} the compiled result matches eager "
                                  f"bit for bit (verified on graph {record.index}'s inputs)"})
    return hints


def verdict(record, e2e_message: str, hints: list[dict]) -> dict:
    """report.json's `numerics` entry for graph `record`."""
    seen = record.record.get("verdict") or {}
    return {"verdict": VERDICT, "graph": record.index, "key": record.key, "end_to_end": e2e_message,
            "evidence": evidence(seen), "metrics": seen.get("metrics") or [], "reference": seen.get("reference"),
            "hints": hints}


def console_rows(numerics: dict) -> list[tuple[str, str]]:
    rows = [("verdict", f"[bold]{VERDICT}[/bold]"),
            ("end to end", numerics["end_to_end"]),
            ("graph", f"{numerics['graph']}: compiling it alone changes the program's result, and it passes every "
                      f"check of the oracle against eager")]
    rows += [("evidence", line) for line in numerics["evidence"]]
    rows += [("hint", hint["text"]) for hint in numerics["hints"]]
    if not numerics["hints"]:
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
