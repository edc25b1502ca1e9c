"""The corpus manifest is well formed, names real scripts, and covers what the bench needs.

Whether each case really fails as its entry says is checked by running the cases:
`PYTHONPATH=. python corpus/check_manifest.py` (one process, all CPU cases, ~10 min).

corpus/programs/manifest.json holds two kinds of program. The foreign programs (kind `none`) are
held to their own, shorter entry: no bug is planted in them, so they have no failing graph, stage,
culprit or op count. The planted program shapes (issue 22, item 4: fullgraph, dynamic shapes,
compile modes, training loops, graph breaks, ...) are answered like manifest.json's cases: a plant
in the script and a full entry with a graph_index. The bench reads both files, so names must not
clash."""
import ast
import re

from conftest import CORPUS, foreign_programs, manifest, planted_programs, programs_manifest

from compiler.inject import parse_spec

FIELDS = {"name": str, "script": str, "kind": str, "graphs": int, "graph_index": int, "stage": str,
          "culprit_ops": list, "min_ops": int, "device": str, "dtype": str, "fx_nodes": int, "tags": list,
          "description": str}
KINDS = {"compile_error", "crash", "runtime_error", "accuracy"}
STAGES = {"inductor", "aot_eager_decomp_partition", "aot_eager", "eager"}
PROGRAM_FIELDS = {"name": str, "script": str, "kind": str, "expect_exit": int, "graphs": int, "device": str,
                  "tags": list, "description": str}
FAILING_ONLY = {"graph_index", "stage", "culprit_ops", "min_ops", "fx_nodes"}


def test_every_entry_is_complete_and_consistent():
    cases = manifest()
    assert isinstance(cases, list) and len(cases) >= 40
    assert len({c["name"] for c in cases}) == len(cases)
    for c in cases:
        assert c["kind"] != "none", f"{c['name']}: a program with nothing failing belongs in programs/manifest.json"
        for name, kind in FIELDS.items():
            assert isinstance(c.get(name), kind), (c.get("name"), name)
        assert c["script"] == c["name"] + ".py", c["name"]
        assert c["kind"] in KINDS and c["stage"] in STAGES and c["device"] in {"cpu", "cuda"}, c["name"]
        assert 0 <= c["graph_index"] < c["graphs"], c["name"]
        assert c["culprit_ops"] and 1 <= c["min_ops"], c["name"]
        assert c["fx_nodes"] >= 10, c["name"]  # measured, not a placeholder
        assert all(isinstance(t, str) and t for t in c["tags"]), c["name"]


def test_every_script_exists_has_main_and_plants_a_parseable_bug():
    for c in manifest() + planted_programs():
        source = (CORPUS / c["script"]).read_text()
        tree = ast.parse(source)
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), c["name"]
        assert ast.get_docstring(tree), c["name"]
        plants = re.findall(r'\bplant\("([^"]+)"\)', source)
        knob = "TESTING_ONLY" in source
        assert plants or "inject_bug(" in source or knob, c["name"]
        for spec in plants:
            parse_spec(spec)  # raises on a spec the --inject option would refuse
        if c["device"] == "cuda":
            assert "cuda" in source and "triton" in " ".join(c["tags"]) + source, c["name"]


def test_corpus_covers_kinds_paths_and_program_shapes():
    cases = manifest()
    tags = {t for c in cases for t in c["tags"]}
    assert {"codegen", "lowering", "decomposition", "fusion", "reduction", "indexing"} <= tags
    assert {"multigraph", "backward", "dynamic", "noncontiguous", "channels_last"} <= tags
    assert {"mlp", "conv", "attention", "layernorm", "embedding"} <= tags
    dtypes = {c["dtype"] for c in cases}
    assert {"float32", "float16", "bfloat16", "bool"} <= dtypes and dtypes & {"int32", "int64", "uint8"}
    codegen = [c for c in cases if "codegen" in c["tags"] or "knob" in c["tags"]]
    for kind in ("compile_error", "accuracy"):
        for path in ("cpp", "cppvec", "triton"):
            assert any(c["kind"] == kind and path in c["tags"] for c in codegen), (kind, path)
    assert any(c["kind"] == "runtime_error" and "triton" in c["tags"] for c in codegen)
    assert any(c["kind"] == "runtime_error" and c["device"] == "cpu" for c in codegen)
    assert any(c["kind"] == "crash" for c in codegen)
    assert any(c["stage"] == "aot_eager_decomp_partition" for c in cases)
    assert any(c["min_ops"] >= 2 for c in cases if "fusion" in c["tags"])
    assert any(c["graphs"] > 1 and c["graph_index"] > 0 for c in cases)
    assert any(c["fx_nodes"] >= 200 for c in cases) and all(c["fx_nodes"] <= 300 for c in cases)
    default = [c for c in cases if "default" in c["tags"]]
    assert len(default) >= 10 and all(c["device"] == "cpu" and "backward" not in c["tags"] for c in default)


def test_every_foreign_program_entry_expects_nothing_failed():
    from minifier.exit_codes import EXIT_NOTHING_FAILED

    programs = foreign_programs()
    assert len(programs) >= 10 and len({c["name"] for c in programs}) == len(programs)
    assert not {c["name"] for c in programs} & {c["name"] for c in manifest()}  # one bench, one namespace
    for c in programs:
        for name, kind in PROGRAM_FIELDS.items():
            assert isinstance(c.get(name), kind), (c.get("name"), name)
        assert c["script"] == f"programs/{c['name']}.py" and c["kind"] == "none", c["name"]
        assert c["expect_exit"] == EXIT_NOTHING_FAILED and c["graphs"] >= 1 and c["device"] == "cpu", c["name"]
        assert not FAILING_ONLY & set(c), (c["name"], FAILING_ONLY & set(c))
        assert "foreign" in c["tags"], c["name"]


def test_every_foreign_program_exists_has_main_and_plants_nothing():
    for c in foreign_programs():
        source = (CORPUS / c["script"]).read_text()
        tree = ast.parse(source)
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), c["name"]
        assert "torch.compile" in source or ".compile(" in source, c["name"]
        assert not re.search(r"\bplant\(|inject_bug\(|compiler\.inject|TESTING_ONLY", source), c["name"]


def test_the_bench_reads_both_manifests():
    from minifier.bench import load_manifest

    names = [c["name"] for c in load_manifest()]
    assert names == [c["name"] for c in manifest()] + [c["name"] for c in programs_manifest()]


# Each program shape of issue 22, item 4: the tag its entry carries and what its script must say.
SHAPES = {
    "fullgraph": r"fullgraph=True",
    "dynamic_true": r"dynamic=True",
    "mark_dynamic": r"mark_dynamic\(",
    "recompile": r"",
    "reduce_overhead": r'mode="reduce-overhead"',
    "max_autotune": r'mode="max-autotune',
    "module_compile": r"\.compile\(\)",
    "decorator": r"@torch\.compile",
    "training_loop": r"\.backward\(\)",
    "optimizer": r"opt\.step\(\)",
    "print": r"\bprint\(",
    "data_dependent_branch": r"\bif .*(mean|sum|max|any|all)\(\)",
    "autocast": r"torch\.autocast\(\"cpu\", dtype=torch\.bfloat16\)",
    "no_grad": r"torch\.no_grad\(\)",
    "inference_mode": r"torch\.inference_mode\(\)",
    "batchnorm": r"BatchNorm",
    "train_mode": r"\.train\(\)",
    "data_loop": r"\bfor .* in ",
}


def test_every_planted_program_is_a_complete_failing_entry():
    programs = planted_programs()
    assert len(programs) >= 15
    for c in programs:
        for name, kind in FIELDS.items():
            assert isinstance(c.get(name), kind), (c.get("name"), name)
        assert c["script"] == f"programs/{c['name']}.py", c["name"]
        assert c["kind"] in KINDS and c["stage"] in STAGES and c["device"] == "cpu", c["name"]
        assert 0 <= c["graph_index"] < c["graphs"], c["name"]
        assert c["culprit_ops"] and 1 <= c["min_ops"], c["name"]
        assert 5 <= c["fx_nodes"] <= 300, c["name"]  # measured by check_manifest --update (small programs)
        assert "program_shape" in c["tags"] and "foreign" not in c["tags"], c["name"]
        assert "default" not in c["tags"], c["name"]  # run with --cases, -k planted_ or --all


def test_planted_programs_cover_every_program_shape_and_vary_the_plant():
    programs = planted_programs()
    for shape, pattern in SHAPES.items():
        having = [c for c in programs if shape in c["tags"]]
        assert having, f"no planted program has the shape {shape!r}"
        for c in having:
            assert re.search(pattern, (CORPUS / c["script"]).read_text()), (c["name"], shape)
    assert {c["kind"] for c in programs} >= {"accuracy", "compile_error", "runtime_error"}
    assert {c["stage"] for c in programs} >= {"inductor", "aot_eager_decomp_partition"}
    assert any(c["graph_index"] > 0 for c in programs)
    plants = {"lowering", "decomposition", "codegen", "knob", "indexing", "reduction"}
    assert plants <= {t for c in programs for t in c["tags"]}
    assert len({c["culprit_ops"][0] for c in programs}) >= 10
