"""compiler.kernels on real Inductor: the kernel that computes a node, found by the node's name."""
import pytest
import torch

from compiler import inject, kernels
from compiler.stages import CompileSpec, fresh_compile_state


class Clamp(torch.nn.Module):
    """The seeds' example: neg -> maximum -> cat on uint8, plus an unrelated matmul."""

    def forward(self, level, pixels, feats, weight):
        a = torch.neg(level)
        b = torch.maximum(pixels, a)
        y = torch.cat([b])
        z = torch.mm(feats, weight).relu()
        return y, z


def _inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randint(256, (1,), dtype=torch.uint8, generator=g),
            torch.randint(256, (8390,), dtype=torch.uint8, generator=g),
            torch.randn(4, 8, generator=g), torch.randn(8, 3, generator=g)]


def _kernels(*injections):
    spec = CompileSpec(grad_enabled=False)
    with inject.injected(*injections), fresh_compile_state(spec):
        return kernels.generated_code(Clamp(), _inputs(), spec)


def test_planted_neg_is_in_the_kernel_named_for_the_neg_node():
    codes, found = _kernels(inject.Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp", "cppvec")))
    assert codes
    holding = kernels.kernels_of(found, "a")
    assert len(holding) == 1, [(k.name, k.nodes) for k in found]
    kernel = holding[0]
    assert kernel.kind == "cpp" and "neg" in kernel.name
    assert "2 * " in kernel.source  # the planted expression, cut out of the generated code
    assert {"a", "b"} <= set(kernel.nodes)
    assert kernel.source in "\n".join(codes)
    extern = [k for k in found if k.kind == "extern"]
    assert [k.nodes for k in extern] == [["mm"]]  # the matmul is a library call of its own
    assert extern[0].source.splitlines()[-1].startswith("extern_kernels.mm(")


def test_without_the_bug_the_same_kernel_prints_a_real_negation():
    _, found = _kernels()
    kernel = kernels.kernels_of(found, "a")[0]
    assert "2 * " not in kernel.source
    assert "-" in kernel.source


RESIDUAL = """\
import torch
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
w = torch.randn(16, 16)

@torch.compile
def block(x):
    x = x + torch.relu(x @ w).sin()
    x = x + torch.cos(x @ w)
    return x

block(torch.randn(4, 16))
"""


@pytest.mark.slow
def test_the_scripts_kernel_map_is_kept_under_the_replayed_graphs_names(tmp_path, project_env, monkeypatch):
    """The capture records the kernels of each forward graph it compiles (the divergence search
    takes them instead of generating the code again). Dynamo of 2.13 names the residual adds
    after the script's variable (`x`, `x_1`); the replayed graph is re-traced (`add`, `add_1`),
    and the map is renamed to it by position."""
    from minifier.capture.process import run_capture
    from minifier.capture.values import load_graph, script_kernels

    script = tmp_path / "residual.py"
    script.write_text(RESIDUAL)
    monkeypatch.setenv("PYTHONPATH", project_env["PYTHONPATH"])
    capture = run_capture(script, [], tmp_path / "cap", tmp_path / "cap.log", 600)
    record = capture.graphs[0]
    gm, _ = load_graph(record)
    mapped = script_kernels(record, gm)
    ops = {n.name for n in gm.graph.nodes if n.op not in ("placeholder", "output")}
    assert mapped and all(set(k["nodes"]) <= ops for k in mapped), mapped
    computed = {name for k in mapped for name in k["nodes"]}
    relu = next(n.name for n in gm.graph.nodes if n.target is torch.relu)
    adds = [n.name for n in gm.graph.nodes if "add" in str(n.target)]
    assert relu in computed and len(adds) == 2 and set(adds) <= computed, (adds, mapped)
