"""Findings of different graphs are one bug only when the evidence says the same thing is wrong
(minifier/report/same_bug.py): the same kind at the same stage, and blame naming the same op."""
from minifier.report.rows import finding_counts
from minifier.report.same_bug import merge_same_bugs, reduced_in


def lowering(target: str) -> dict:
    op = target.split(".")[1]
    return {"what": "lowering", "finding": f"falling back {op} ({target}) to ATen makes it pass",
            "run": {"disable": {"lowerings": [op]}, "verdict": "pass"}, "nodes": [op], "targets": [target]}


FUSION = {"what": "fusion", "finding": "needs fusion (every node in its own kernel passes)",
          "run": {"apart": "all", "verdict": "pass"}}
PASS = {"what": "pass", "finding": "post_grad: skipping pattern_matcher makes it pass",
        "run": {"disable": {"post_grad": ["pattern_matcher"]}, "verdict": "pass"}, "passes": ["pattern_matcher"]}


def row(graph: int, ops: list[str], blame: list[dict] | None, kind: str = "accuracy", **extra) -> dict:
    r = {"failing_graph": graph, "also_in_graphs": [], "part": "forward" if graph == 0 else "backward",
         "stage": "inductor", "failure": {"kind": kind, "signature": f"{kind}@inductor"}, "ops_after": len(ops),
         "ops": ops, "repro": f"/out/bug-{graph}/repro.py", "verified": True, **extra}
    if blame is not None:
        r["blame"] = blame
    return r


def test_the_forward_and_backward_findings_of_one_planted_op_are_one_bug():
    forward, backward = row(0, ["gelu"], [lowering("aten.erf.default")]), row(1, ["erf"], [lowering("aten.erf.default")])
    merged = merge_same_bugs([forward, backward])
    assert len(merged) == 1 and merged[0]["repro"] == forward["repro"] and merged[0]["also_in_graphs"] == [1]
    (folded,) = merged[0]["also_reduced"]
    assert (folded["failing_graph"], folded["ops"], folded["repro"]) == (1, ["erf"], backward["repro"])
    assert folded["why"] == "the same failure (accuracy at inductor), blamed on the lowering of aten.erf.default"
    assert reduced_in(merged) == [0, 1] and finding_counts(merged)["findings"] == 1


def test_the_smaller_repro_is_kept_and_a_tie_keeps_the_first_found():
    big = row(0, ["mul", "tanh"], [lowering("aten.tanh.default")])
    small = row(1, ["tanh"], [lowering("aten.tanh.default")], also_in_graphs=[3])
    (merged,) = merge_same_bugs([big, small])
    assert merged["ops"] == ["tanh"] and merged["failing_graph"] == 1 and merged["also_in_graphs"] == [0, 3]
    assert [a["failing_graph"] for a in merged["also_reduced"]] == [0]
    (tie,) = merge_same_bugs([row(2, ["gelu"], [lowering("aten.tanh.default")]), small])
    assert tie["failing_graph"] == 2 and tie["also_in_graphs"] == [1, 3]


def test_a_bug_in_three_graphs_is_one_row_with_both_other_graphs():
    rows = [row(g, ["erf"], [lowering("aten.erf.default")]) for g in (0, 1, 2)]
    (merged,) = merge_same_bugs(rows)
    assert merged["also_in_graphs"] == [1, 2] and [a["failing_graph"] for a in merged["also_reduced"]] == [1, 2]


def test_without_the_evidence_findings_stay_apart():
    erf = [lowering("aten.erf.default")]
    apart = {
        "another op's lowering (a real cat bug beside the planted one)": [row(1, ["cat"], [lowering("aten.cat.default")])],
        "another kind": [row(1, ["erf"], erf, kind="compile_error")],
        "another stage": [row(1, ["erf"], erf, stage="aot_eager")],
        "no blame": [row(1, ["erf"], None)],
        "blame could not run": [row(1, ["erf"], erf, blame_error="not run: --max-time ran out")],
        "blame names more": [row(1, ["erf"], erf + [FUSION])],
        "a repro that did not verify": [row(1, ["erf"], erf, verified=False, unverified="did not reproduce")],
        "the same graph (a second piece of the same code)": [row(0, ["erf"], erf)],
    }
    for why, later in apart.items():
        assert len(merge_same_bugs([row(0, ["gelu"], erf)] + later)) == 2, why
    for layer in ([FUSION], [PASS]):  # a layer or a whole rewrite, shared by many bugs: no op named
        assert len(merge_same_bugs([row(0, ["a"], layer), row(1, ["b"], layer)])) == 2, layer
