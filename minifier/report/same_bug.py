"""Findings of different graphs that are one bug: one report row, the other graphs listed in it.

A training step compiles a forward and a backward graph, and autograd copies an op into both:
a planted erf bug was found in the forward graph (reduced to `gelu`, which Inductor lowers
through erf) and again in the backward graph (reduced to `erf`, from gelu's derivative). The
search could not tell them apart (their first divergent nodes are other ops), but blame, run
on each verified repro, names what is wrong in each: the same thing.

The rule: two findings in different graphs are one bug when the evidence already computed says
the same thing is wrong:
- both were reduced to a repro that did not fail verification (no `unverified`, no `blame_error`);
- they fail in the same kind (accuracy, compile error, ...) at the same stage;
- their blame findings are the same, and at least one of them names an op: a node's lowering by
  its ATen targets, or a decomposition by its op. A code path, fusion, a config flag or a graph
  pass as such names a layer many bugs share, and a pass is a whole rewrite that can hold
  several: with only those, or no blame, the two stay apart (a wrong merge of two real bugs is
  worse than a double report). So a real second bug beside a planted one (torch 2.13's `cat`
  stride bug) keeps its own row: its blame names another op.
Two findings of one graph stay two rows (the later one marked `same_cause_as`,
minifier.report.shared_causes): each is another piece of the same code, with its own repro.

The merged row keeps the smallest repro (fewest ops; on a tie the one found first, whose repro is
the output folder's own), takes the other's graphs into `also_in_graphs`, and lists each finding
it absorbed in `also_reduced` (its graph, ops, repro and why it is the same bug): nothing is lost.
"""
from __future__ import annotations

import json

from minifier.report.shared_causes import SPECIFIC, blamed_part, switch_of


def blame_key(findings: list[dict]) -> tuple | None:
    """What the blame findings say is wrong: the parts they name (shared_causes.blamed_part: node
    names left out, they differ from repro to repro) and every other finding as said; None unless
    one of them names an op (a lowering by its targets, a decomposition by the one it disabled)."""
    if not any((f.get("what") == "lowering" and f.get("targets"))
               or (f.get("what") == "decomposition" and switch_of(f).get("disable")) for f in findings):
        return None
    said = sorted((f.get("what"), f.get("finding", ""), json.dumps(switch_of(f), sort_keys=True, default=str))
                  for f in findings if f.get("what") not in SPECIFIC)
    return blamed_part(findings) + tuple(said)


def one_bug_key(row: dict) -> tuple | None:
    """The key two rows of one bug share: kind, stage and what blame names; None without the evidence."""
    if "repro" not in row or row.get("unverified") or row.get("verified") is False or row.get("blame_error"):
        return None
    said = blame_key(row.get("blame") or [])
    if said is None:
        return None
    return ((row.get("failure") or {}).get("kind"), row.get("stage"), said)


def graphs_of(row: dict) -> set[int]:
    """Every graph a row's bug shows in."""
    return {row["failing_graph"], *row.get("also_in_graphs", []),
            *(a["failing_graph"] for a in row.get("also_reduced", []))}


def reduced_in(rows: list[dict]) -> list[int]:
    """The graphs a bug was found and reduced in (report.json's `failing_graphs`), folded ones too."""
    return sorted({r["failing_graph"] for r in rows} | {a["failing_graph"] for r in rows for a in r.get("also_reduced", [])})


def absorbed(row: dict) -> dict:
    """A finding folded into another row: where it was found and its repro (kept in its folder)."""
    kept = ("failing_graph", "part", "failure", "ops_before", "ops_after", "ops", "repro", "verified")
    return {**{k: row[k] for k in kept if k in row},
            "why": f"the same failure ({row['failure']['kind']} at {row['stage']}), blamed on "
                   f"{blamed_op(row.get('blame') or [])}"}


def blamed_op(findings: list[dict]) -> str:
    """The op(s) blame names, in words: `the lowering of aten.erf.default`."""
    named = [f"the lowering of {', '.join(map(str, f['targets']))}" for f in findings
             if f.get("what") == "lowering" and f.get("targets")]
    named += [f"the decomposition of {', '.join(map(str, f.get('ops') or ['?']))}" for f in findings
              if f.get("what") == "decomposition"]
    return " and ".join(named)


def merge(into: dict, other: dict) -> dict:
    """One row for both: the smaller repro's, with the other's graphs and findings."""
    keep, fold = (other, into) if other.get("ops_after", 0) < into.get("ops_after", 0) else (into, other)
    merged = {**keep, "also_reduced": keep.get("also_reduced", []) + [absorbed(fold)] + fold.get("also_reduced", [])}
    merged["also_in_graphs"] = sorted((graphs_of(into) | graphs_of(other)) - {keep["failing_graph"]})
    return merged


def merge_same_bugs(rows: list[dict]) -> list[dict]:
    """`rows` with each finding that is a bug already reported in another graph folded into that
    bug's row (the rule: this module's docstring); order kept, by where each bug was first found."""
    out: list[dict] = []
    for row in rows:
        key = one_bug_key(row)
        same = next((i for i, kept in enumerate(out) if key is not None and one_bug_key(kept) == key
                     and row["failing_graph"] not in graphs_of(kept)), None)
        if same is None:
            out.append(row)
        else:
            out[same] = merge(out[same], row)
    return out
