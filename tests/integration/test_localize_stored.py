"""The divergence search judges the values Inductor stores anyway (minifier.graph.nodes.
stored_nodes): exposing them as outputs must build no new kernel, or every search pays a C++
build for nothing. A residual stream is the hard case: Inductor recomputes the residual sums
inside the layer-norm kernels, stores one every few blocks, and the last kernel of the add
chain writes over it in place while a layer norm reads it too."""
import pytest
import torch
import torch.fx as fx

from compiler import kernels, settings
from compiler.stages import CompileSetup, CompileSpec, compile_for_stage, fresh_compile_state
from minifier.capture.values import record_values
from minifier.graph.nodes import exposed_nodes, stored_nodes
from minifier.graph.edit import rebuild
from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
from minifier.capture.values import record_values
from minifier.graph.edit import rebuild
from minifier.graph.nodes import exposed_nodes, stored_nodes

F = torch.nn.functional


def residual_mlp(x, w1, w2, b1, b2):
    for _ in range(8):
        x = x + F.linear(F.gelu(F.linear(F.layer_norm(x, (16,)), w1, b1)), w2, b2)
    return F.linear(x, w2.t())


def _kernels(gm: fx.GraphModule, inputs: list) -> list:
    with torch.no_grad(), fresh_compile_state(CompileSpec()), kernels.recorded_kernels() as found:
        compile_for_stage(gm, "inductor", CompileSpec())(*inputs)
    return found


@pytest.mark.slow
def test_exposing_the_stored_values_of_a_residual_stream_builds_no_new_kernel():
    settings.apply()
    torch.manual_seed(0)
    inputs = [torch.randn(8, 16), torch.randn(32, 16), torch.randn(16, 32), torch.randn(32), torch.randn(16)]
    gm = fx.symbolic_trace(residual_mlp)
    base = _kernels(gm, inputs)
    names = kernels.kernel_node_names(gm, base)
    node_kernels: dict[str, set] = {}
    for kernel in base:
        for node in kernel.nodes:
            if node in names:
                node_kernels.setdefault(names[node], set()).add(kernel.name)
    values = record_values(gm, inputs)
    stored = stored_nodes(gm, exposed_nodes(gm, values), node_kernels, {k.name for k in base if k.in_place})
    assert {"layer_norm", "gelu", "layer_norm_7", "gelu_7"} <= set(stored)  # still judged
    exposed = _kernels(rebuild(gm, outputs=stored), inputs)
    built = {k.source for k in base if k.kind != "extern"}
    assert {k.source for k in exposed if k.kind != "extern"} <= built, "exposing a stored value changed a kernel"


def linear_relu(x, w1, b1, w2, b2):
    return F.linear(torch.relu(F.linear(F.layer_norm(x, (16,)), w1, b1)), w2, b2)


def test_an_activation_over_a_linears_output_is_the_root_without_a_kernel_built(tmp_path):
    """relu's kernel writes over addmm's output in place, so addmm's value is never stored.
    Whether relu is the root (and not the addmm it reads) is settled by running that addmm
    alone, an ATen call with no kernel to build, instead of compiling the two as a new piece
    (a new relu kernel, seconds of C++ build: the reduction's first candidate builds it anyway)."""
    from minifier.workers.divergence_worker import run_divergence
    from minifier.workers.ask import divergence_question
    from minifier.workers.evaluate import Evaluator
    from minifier.workers.protocol import CaseValues
    from repro.inputs import save_values

    settings.apply()
    torch.manual_seed(0)
    inputs = [torch.randn(8, 16), torch.randn(64, 16), torch.randn(64), torch.randn(16, 64), torch.randn(16)]
    gm = fx.symbolic_trace(linear_relu)
    spec = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"})
    with torch._inductor.config.patch(spec.config):
        base = _kernels(gm, inputs)
    values = record_values(gm, inputs)
    save_values(values, tmp_path / "values.pt")
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    ev = Evaluator(None, tmp_path, CompileSetup(spec, []), signature="accuracy@inductor")
    _, stage, _, how = divergence_question(gm)
    with kernels.recorded_kernels() as seen:
        answer = run_divergence(ev.job(gm, stage, **how), CaseValues())
    assert answer["roots"] == ["relu"] and answer["how"] == "stored"
    assert answer["metrics"]["linear"]["ok"]  # the addmm it reads, judged alone
    built = {k.source for k in base if k.kind != "extern"}
    assert {k.source for k in seen if k.kind != "extern"} <= built, "a new kernel was built to find the root"


def test_a_check_judged_on_its_first_outputs_keeps_every_outputs_metrics():
    """A confirmation that also returns stored values is judged on the graph's own outputs:
    a wrong stored value alone is no failure of the graph, yet its metrics are kept for the
    divergence search; a wrong own output fails, named as the plain check names it."""
    from compiler.oracle import check
    from minifier.workers.worker import judged_on_first

    x = torch.randn(4, 8)
    eager = lambda t: (t.sin(), t.cos(), t.exp())  # noqa: E731
    inner_wrong = lambda t: (t.sin(), t.cos() + 1, t.exp())  # noqa: E731
    own_wrong = lambda t: (t.sin() + 1, t.cos(), t.exp())  # noqa: E731
    wide = check(eager, [x], inner_wrong)
    assert wide.status == "fail"
    narrowed = judged_on_first(wide, 1, "inductor")
    assert narrowed.status == "pass" and len(narrowed.metrics) == 3
    assert [m["ok"] for m in narrowed.metrics] == [True, False, True]
    failing = judged_on_first(check(eager, [x], own_wrong), 1, "inductor")
    plain = check(lambda t: (t.sin(),), [x], lambda t: (t.sin() + 1,))
    assert (failing.status, failing.signature, failing.message) == (plain.status, plain.signature, plain.message)
    assert len(failing.metrics) == 3
