"""`minify bisect` names the part of the compiler a repro needs in order to fail.

Each case plants one corpus bug (compiler.inject: vectorized codegen, fusion, decomposition,
lowering; corpus/postgrad_pass_wrong_rewrite.py: a wrong custom post-grad pass) and checks
the blame on a minimal repro folder, with every experiment a real Inductor compile. One case
goes through the whole tool (script -> repro folder -> `minify bisect` command); the others
write the minimal repro folder directly (repro.writer), as the pipeline would after reducing.
"""
import ast
import json
import subprocess
import sys
from dataclasses import dataclass

import pytest
import torch
import torch.fx as fx

from compiler.inject import parse_spec
from compiler.inject_spec import BugSpec
from compiler.stages import CompileSetup, CompileSpec
from conftest import CORPUS, run_minify
from minifier.blame.search import blame, minimal_set
from repro.writer import ReproInfo, write_repro



def corpus_function(script: str, name: str):
    """A function of a corpus script, without running the script's top level (which plants its bug)."""
    path = CORPUS / script
    fn = next(node for node in ast.parse(path.read_text()).body
              if isinstance(node, ast.FunctionDef) and node.name == name)
    namespace: dict = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), str(path), "exec"), namespace)
    return namespace[name]


@dataclass(frozen=True)
class PostGradPassBug(BugSpec):
    """The corpus script's wrong custom post-grad pass, carried by repro.py like any planted bug."""

    target = "post_grad_pass"
    patcher = staticmethod(corpus_function("postgrad_pass_wrong_rewrite.py", "plant_mul_to_add_pass"))


def traced(module: torch.nn.Module) -> fx.GraphModule:
    gm = fx.symbolic_trace(module)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


def repro_folder(folder, module, inputs, injections, stage="inductor", config=None):
    """A minimal repro folder of an accuracy bug, as the pipeline writes it after reducing."""
    info = ReproInfo(signature=f"accuracy@{stage}", kind="accuracy", stage=stage, message="differs from eager",
                     setup=CompileSetup(CompileSpec(config=dict(config or {}), grad_enabled=False), tuple(injections)),
                     source=f"{folder.name}.py, graph 0 of 1", script=f"{folder.name}.py", graph=0)
    write_repro(folder, traced(module), inputs, info)
    return folder


def only(findings, what):
    found = [f for f in findings if f["what"] == what]
    assert len(found) == 1, json.dumps(findings, indent=1)
    return found[0]


class GatedSigmoid(torch.nn.Module):
    def forward(self, a, b):
        return (a * torch.sigmoid(b),)


class SigmoidMulTanh(torch.nn.Module):
    def forward(self, x, y):
        return (torch.tanh(torch.sigmoid(x) * y),)


class LayerNorm(torch.nn.Module):
    def forward(self, x, w, b):
        return (torch.nn.functional.layer_norm(torch.relu(x), (16,), w, b),)


class StridedLog1p(torch.nn.Module):
    def forward(self, x):
        return (torch.log1p(x[..., ::2].abs()),)


class ReluTanh(torch.nn.Module):
    def forward(self, x):
        return (torch.tanh(torch.relu(x)),)


class ReluGate(torch.nn.Module):
    def forward(self, h, g):
        return (torch.relu(h) * torch.sigmoid(g) - 1,)


def test_minimal_set_finds_one_or_two_culprits():
    calls = []

    def fixes(culprits):
        def check(subset):
            calls.append(tuple(subset))
            return culprits <= set(subset)
        return check

    assert minimal_set(list("abcdefgh"), fixes({"f"})) == ["f"]
    assert len(calls) <= 6
    assert sorted(minimal_set(list("abcdefgh"), fixes({"b", "g"}))) == ["b", "g"]
    assert minimal_set(["only"], fixes({"only"})) == ["only"]


@pytest.mark.e2e
@pytest.mark.slow
def test_vectorized_only_bug_through_the_tool_and_the_command(tmp_path):
    """corpus/sigmoid_gate_compile_error_vec.py: minify, then `minify bisect` on its folder."""
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "sigmoid_gate_compile_error_vec.py"), "-o", str(out), "-q", "--no-verify"],
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    bisect = run_minify(["bisect", str(out)], cwd=tmp_path)
    assert bisect.returncode == 0, bisect.stdout[-3000:] + bisect.stderr[-3000:]
    assert "fails only with the vectorized C++ path" in bisect.stdout
    report = json.loads((out / "blame.json").read_text())
    codegen = only(report["blame"], "codegen")
    assert codegen["run"] == {"config": {"cpp.simdlen": 1}, "verdict": "pass"}
    assert only(report["blame"], "lowering")["nodes"] == ["sigmoid"]  # the node whose code is wrong
    assert not [f for f in report["blame"] if f["what"] in ("fusion", "pass")]
    assert report["runs"][0]["name"] == "baseline" and report["runs"][0]["verdict"] == "reproduces"


@pytest.mark.slow
def test_fusion_bug_names_the_pair(tmp_path):
    """corpus/fusion_sigmoid_mul_glu.py's bug: mul is wrong only when sigmoid is in its kernel."""
    folder = repro_folder(tmp_path / "fusion", GatedSigmoid(), [torch.randn(32), torch.randn(32)],
                          [parse_spec("fusion:sigmoid+mul:accuracy:double@cpp,cppvec")])
    findings = blame(folder, say=lambda text: None)
    fusion = only(findings, "fusion")
    assert fusion["pairs"] == [["sigmoid", "mul"]]
    assert fusion["run"] == {"apart": ["sigmoid"], "verdict": "pass"}
    assert not [f for f in findings if f["what"] in ("codegen", "lowering")]  # both C++ paths fail; stopped there
    saved = json.loads((folder / "blame.json").read_text())
    assert saved["blame"] == findings
    assert {"what": "scalar C++ (no vectorization)", "config": {"cpp.simdlen": 1}, "verdict": "reproduces"} \
        in saved["ruled_out"]


@pytest.mark.slow
def test_scalar_only_bug_is_not_taken_for_fusion(tmp_path):
    """corpus/log1p_crash_strided_scalar.py's path (as an accuracy bug): log1p is wrong only in scalar C++,
    which it reaches by reading a strided view; in a kernel of its own it would vectorize and pass."""
    folder = repro_folder(tmp_path / "scalar", StridedLog1p(), [torch.randn(16, 127)],
                          [parse_spec("log1p:accuracy:double@cpp")])
    findings = blame(folder, say=lambda text: None)
    codegen = only(findings, "codegen")
    assert "scalar C++ path" in codegen["finding"] and codegen["control"]["verdict"] == "reproduces"
    lowering = only(findings, "lowering")
    assert lowering["nodes"] == ["log1p"] and "scalar C++ code" in lowering["finding"]
    assert lowering["run"] == {"config": {"cpp.simdlen": 1}, "disable": {"lowerings": ["log1p"]}, "verdict": "pass"}
    assert not [f for f in findings if f["what"] == "fusion"]


@pytest.mark.slow
def test_decomposition_bug_names_the_op(tmp_path):
    """corpus/decomp_layer_norm_mlp.py's bug: Inductor's native_layer_norm decomposition adds one."""
    folder = repro_folder(tmp_path / "decomp", LayerNorm(), [torch.randn(4, 16), torch.randn(16), torch.randn(16)],
                          [parse_spec("decomposition:native_layer_norm:accuracy:add_one")],
                          stage="aot_eager_decomp_partition")
    findings = blame(folder, say=lambda text: None)
    decomposition = only(findings, "decomposition")
    assert decomposition["ops"] == ["aten.native_layer_norm.default"]
    assert decomposition["run"] == {"disable": {"decomposition": ["aten.native_layer_norm.default"]},
                                    "verdict": "pass"}
    assert len(findings) == 1


@pytest.mark.slow
def test_lowering_bug_names_the_node(tmp_path):
    """corpus/lowering_sigmoid_gated_mlp.py's bug: aten.sigmoid's lowering builds -sigmoid(x)."""
    folder = repro_folder(tmp_path / "lowering", SigmoidMulTanh(), [torch.randn(32), torch.randn(32)],
                          [parse_spec("lowering:sigmoid:accuracy:negate")])
    findings = blame(folder, say=lambda text: None)
    lowering = only(findings, "lowering")
    assert lowering["nodes"] == ["sigmoid"] and lowering["targets"] == ["aten.sigmoid.default"]
    assert lowering["run"] == {"disable": {"lowerings": ["sigmoid"]}, "verdict": "pass"}
    assert not [f for f in findings if f["what"] in ("codegen", "fusion", "pass")]


@pytest.mark.slow
def test_script_config_that_plants_the_bug_is_named(tmp_path):
    """corpus/relu_accuracy.py's bug: the script set Inductor's own test knob for relu."""
    folder = repro_folder(tmp_path / "knob", ReluTanh(), [torch.randn(64)], [],
                          config={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy", "pattern_matcher": False})
    findings = blame(folder, say=lambda text: None)
    config = only(findings, "config")
    assert config["run"] == {"config": {"cpp.inject_relu_bug_TESTING_ONLY": None}, "verdict": "pass"}
    assert "pattern_matcher" not in config["finding"]  # changed by the script too, but not needed
    assert only(findings, "lowering")["nodes"] == ["relu"]


@pytest.mark.slow
def test_wrong_post_grad_pass_is_named(tmp_path):
    """corpus/postgrad_pass_wrong_rewrite.py: a custom post-grad pass turns mul into add."""
    folder = repro_folder(tmp_path / "postgrad", ReluGate(), [torch.randn(8, 32), torch.randn(8, 32)],
                          [PostGradPassBug()])
    findings = blame(folder, say=lambda text: None)
    found = only(findings, "pass")
    assert found["subsystem"] == "post_grad_passes" and found["passes"] == ["post_grad_custom_post_pass"]
    assert found["run"] == {"disable": {"post_grad_passes": ["post_grad_custom_post_pass"]}, "verdict": "pass"}
    assert len(findings) == 1


@pytest.mark.e2e
def test_bisect_refuses_a_folder_that_is_not_a_repro(tmp_path, project_env):
    done = subprocess.run([sys.executable, "-m", "minifier", "bisect", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, env=project_env)
    assert done.returncode == 2 and "not a repro folder" in done.stderr


@pytest.mark.slow
def test_an_experiment_started_ahead_gives_the_search_its_answer(tmp_path):
    """A GPU repro's CPU probe is asked beside the search from the start (minifier/blame/ahead.py):
    its answer is the one the search's own job gives, and one closed before a worker takes it
    is never asked."""
    from compiler.subsystems import Experiment
    from minifier.blame.ahead import AheadRuns
    from minifier.blame.jobs import BlameJobs
    from minifier.blame.search import experiment_key
    from minifier.workers.pool import WorkerPool

    folder = repro_folder(tmp_path / "ahead", SigmoidMulTanh(), [torch.randn(32), torch.randn(32)],
                          [parse_spec("lowering:sigmoid:accuracy:negate")])
    fixed = Experiment("sigmoid lowered by ATen", disable={"lowerings": ["sigmoid"]})
    kept = Experiment("scalar C++", config={"cpp.simdlen": 1})
    pool = WorkerPool(1, tmp_path / "logs", timeout=300.0)
    jobs = BlameJobs(pool, folder, "inductor")
    try:
        ahead = AheadRuns(jobs, {experiment_key(fixed): fixed, experiment_key(kept): kept})
        assert ahead.take("not started") is None
        early = {name: ahead.take(experiment_key(e)) for name, e in (("fixed", fixed), ("kept", kept))}
        ahead.close()
        own = {"fixed": jobs.run(fixed), "kept": jobs.run(kept)}
        assert [early[k]["status"] for k in ("fixed", "kept")] == [own[k]["status"] for k in ("fixed", "kept")] \
            == ["pass", "fail"]
        assert early["kept"]["signature"] == own["kept"]["signature"]

        busy = pool.submit({"op": "experiment", "folder": str(folder), "experiment": kept.to_dict()})
        unwanted = AheadRuns(jobs, {"k": kept})  # queued behind `busy` on the one worker
        queued = unwanted.asked["k"].future
        unwanted.close()
        assert unwanted.take("k") is None and queued.cancelled()  # never run
        assert busy.result()["status"] == "fail"
    finally:
        pool.close()


def test_the_first_experiments_are_the_code_path_and_the_script_config_reverted():
    """What every Inductor repro's search asks first starts beside its baseline: on the CPU the
    scalar C++ probe and, where the script changed Inductor config, all of it reverted to the
    defaults (keys as the search makes them, so the answers are taken)."""
    from minifier.blame.search import ON_CPU, SCALAR, config_reverted, experiment_key, first_experiments

    cpu = first_experiments({"device": "cpu", "config": {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}})
    reverted = config_reverted(["cpp.inject_relu_bug_TESTING_ONLY"], {"cpp.inject_relu_bug_TESTING_ONLY": None})
    assert list(cpu) == [experiment_key(SCALAR), experiment_key(reverted)]
    assert list(first_experiments({"device": "cuda"})) == [experiment_key(ON_CPU)]


@pytest.mark.slow
def test_a_crashing_repro_is_blamed_with_its_next_experiments_side_by_side(tmp_path):
    """A crash kills the process it happens in, so each experiment gets a fresh one; those the
    search asks next whatever the answers start side by side after the baseline
    (minifier/blame/ahead.py). The knob and the node are named as for an accuracy bug."""
    info = ReproInfo(signature="crash@inductor|SIGABRT", kind="crash", stage="inductor", message="process died",
                     setup=CompileSetup(CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"}), []),
                     source="relu_runtime_error.py, graph 0 of 1")
    # Large enough for an OpenMP-parallel kernel: the planted throw then aborts the process.
    write_repro(tmp_path / "crash", traced(ReluTanh()), [torch.randn(256, 1024)], info)
    findings = blame(tmp_path / "crash", say=lambda text: None)
    assert only(findings, "config")["run"]["verdict"] == "pass"
    assert only(findings, "lowering")["nodes"] == ["relu"]
    report = json.loads((tmp_path / "crash" / "blame.json").read_text())
    runs = {r["name"]: r["verdict"] for r in report["runs"]}
    assert runs["ATen fallback: relu"] == "pass" and runs["baseline"] == "reproduces", runs
    assert "error" not in runs.values(), runs
