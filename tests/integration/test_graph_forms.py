"""The graph forms real programs hand the compiler (issue 43, item 4): each is captured, and
either replays as a graph where a planted bug is found again, or is marked unreplayable with one
sentence (the program is then reduced instead). Never an internal error.

Each form is a small script with a planted Inductor bug in sigmoid, captured in this process by
the recording backend (compiler.capture.run_script, as `python -m compiler.capture` runs it); its
graphs are then loaded, recorded and checked as the pipeline does (minifier.capture.values,
compiler.oracle)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

from compiler import capture, inject
from compiler.capture_record import SCHEMA_KEY, SCHEMA_VERSION
from compiler.oracle import check
from compiler.stages import CompileSetup, CompileSpec
from compiler.tensor_kinds import copy_tensor
from conftest import run_minify
from minifier.capture.process import GraphRecord
from minifier.capture.values import load_graph, record_values
from repro.info import ReproInfo
from repro.writer import write_repro

SIGMOID_BUG = "lowering:sigmoid:accuracy:negate"

# Forms whose graph replays as a graph: the planted bug is found again outside the script.
REPLAYED = {
    "setitem_into_input_slice": """
        def f(x, y):
            x[:, 1:3] = y.sigmoid()
            return x.sin()
        torch.compile(f)(torch.randn(4, 6), torch.randn(4, 2))
    """,
    "index_put_": """
        def f(x, v):
            x.index_put_((torch.tensor([0, 2]),), v.sigmoid())
            return x.sin()
        torch.compile(f)(torch.randn(4, 6), torch.randn(2, 6))
    """,
    "copy_into_slice": """
        def f(x, y):
            x[:, :2].copy_(y.sigmoid())
            return x * 2
        torch.compile(f)(torch.randn(4, 6), torch.randn(4, 2))
    """,
    "mutation_after_dtype_view": """
        def f(x):
            y = x.view(torch.int32)
            x[:, 2:5] = 2
            return x.sigmoid(), y
        torch.compile(f)(torch.randn(4, 6))
    """,
    "functional_call": """
        m = torch.nn.Linear(4, 4)
        params = {k: v.detach() * 2 for k, v in m.named_parameters()}
        def f(p, x):
            return torch.func.functional_call(m, p, (x,)).sigmoid()
        torch.compile(f)(params, torch.randn(3, 4))
    """,
    "module_forward_hook": """
        m = torch.nn.Linear(4, 4)
        m.register_forward_hook(lambda mod, inp, out: out.sigmoid())
        torch.compile(m)(torch.randn(3, 4))
    """,
    "generator": """
        def gen(x):
            for i in range(3):
                yield x.sigmoid() * i
        def f(x):
            return sum(gen(x))
        torch.compile(f)(torch.randn(8))
    """,
    "context_manager": """
        import contextlib
        @contextlib.contextmanager
        def scaled():
            yield 2.0
        def f(x):
            with torch.no_grad():
                with scaled() as s:
                    y = x.sigmoid() * s
            return y.sin()
        torch.compile(f)(torch.randn(8, requires_grad=True))
    """,
    "tensor_subclass_torch_function": """
        class Logged(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return super().__torch_function__(func, types, args, kwargs or {})
        def f(x):
            return x.sigmoid().sin() * 2
        torch.compile(f)(torch.randn(8).as_subclass(Logged))
    """,
}

# Forms whose graph cannot be written as a graph of its own: marked unreplayable, with the words
# the one line of the report gives.
FALLBACK = {
    "grad": ("""
        torch.compile(torch.func.grad(lambda x: x.sigmoid().sin().sum()))(torch.randn(8))
    """, "torch.func transforms"),
    "vmap": ("""
        torch.compile(torch.func.vmap(lambda x: x.sigmoid().exp() + x.sum()))(torch.randn(3, 8))
    """, "torch.func transforms"),
    "jacfwd_fp16": ("""
        torch.compile(torch.func.jacfwd(lambda x: torch.sigmoid(x) * x))(torch.randn(4, dtype=torch.float16))
    """, "torch.func transforms"),
    "jacrev": ("""
        torch.compile(torch.func.jacrev(lambda x: torch.sigmoid(x) * x))(torch.randn(4))
    """, "torch.func transforms"),
    "autograd_function_custom_backward": ("""
        class Sig(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.sigmoid()
            @staticmethod
            def backward(ctx, g):
                return -g * 3
        x = torch.randn(8, requires_grad=True)
        torch.compile(lambda x: Sig.apply(x) * 2)(x).sum().backward()
    """, "autograd_function_apply"),
    "tensor_hook": ("""
        def f(x):
            y = x.sin()
            y.register_hook(lambda g: g * 2)
            return y.sigmoid()
        torch.compile(f)(torch.randn(8, requires_grad=True)).sum().backward()
    """, "register_hook"),
    "compiled_autograd_backward": ("""
        x = torch.randn(8, requires_grad=True)
        x.register_hook(lambda g: g.sigmoid())  # traced into the compiled autograd graph
        def step(x):
            (x * x).sum().backward()
        with torch._dynamo.config.patch(compiled_autograd=True):
            torch.compile(step)(x)
    """, "compiled autograd backward graph"),
}


def captured(tmp_path, body: str) -> list[GraphRecord]:
    """The graphs of a script made of `body`, captured here with the sigmoid bug planted."""
    script = tmp_path / "form.py"
    script.write_text("import torch\n" + textwrap.dedent(body))
    out = tmp_path / "capture"
    original = torch.compile
    try:
        with inject.injected(inject.parse_spec(SIGMOID_BUG)):
            capture.run_script(script, [], out)
    finally:
        torch.compile = original  # run_script replaced it for the script
        torch._dynamo.reset()
    ending = json.loads((out / "script.json").read_text())
    assert ending["status"] == "ok" and ending[SCHEMA_KEY] == SCHEMA_VERSION
    records = [json.loads((f / "record.json").read_text()) for f in sorted(out.glob("graph_*"))]
    assert records and all(r[SCHEMA_KEY] == SCHEMA_VERSION for r in records)  # each graph's, backward ones too
    return [GraphRecord(r["index"], out / f"graph_{r['index']}", r["nodes"], r, r.get("failure")) for r in records]


@pytest.mark.parametrize("form", sorted(REPLAYED))
def test_form_replays_as_a_graph_and_its_bug_is_found_again(tmp_path, form):
    graphs = captured(tmp_path, REPLAYED[form])
    failing = [g for g in graphs if g.failure]
    assert failing and all(g.replayable for g in failing), [g.record.get("unsupported") for g in graphs]
    for g in failing:
        gm, inputs = load_graph(g)
        before = [copy_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
        (tmp_path / f"values_{g.index}").mkdir()
        values = record_values(gm, inputs, tmp_path / f"values_{g.index}")  # saved, as a case's are
        assert all(not isinstance(a, torch.Tensor) or torch.equal(a, b) for a, b in zip(inputs, before))
        assert all(torch.equal(values[p.name], b) for p, b in zip(gm.graph.find_nodes(op="placeholder"), before)
                   if isinstance(b, torch.Tensor))
        bug = inject.parse_spec(SIGMOID_BUG)
        with inject.injected(bug):
            outcome = check(gm, inputs, torch.compile(gm))
        torch._dynamo.reset()
        assert (outcome.status, outcome.kind) == ("fail", "accuracy"), outcome


@pytest.mark.parametrize("form", sorted(FALLBACK))
def test_form_that_cannot_replay_is_marked_with_one_sentence(tmp_path, form):
    body, words = FALLBACK[form]
    graphs = captured(tmp_path, body)
    failing = [g for g in graphs if g.failure]
    assert failing, [g.record for g in graphs]
    for g in failing:
        why = g.record.get("unsupported", "")
        assert not g.replayable and words in why and "\n" not in why, why


def test_values_of_a_graph_writing_into_a_dtype_view_are_as_computed(tmp_path):
    """The public case (x.view(int32) read, x written, the read returned): each value is the one
    computed before the write, and the values save (torch.save refused two dtypes of one storage)."""
    graphs = captured(tmp_path, """
        def f(x):
            y = x.view(torch.int32) * 2
            y.sub_(-4)
            x[:, 2:5] = 2
            return y.view(torch.int64)
        torch.compile(f)(torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6))
    """)
    gm, inputs = load_graph(graphs[0])
    (tmp_path / "values").mkdir()
    values = record_values(gm, inputs, tmp_path / "values")
    x = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)
    assert torch.equal(inputs[0], x)
    view = next(n for n in gm.graph.nodes if n.op == "call_method" and n.target == "view")
    assert torch.equal(values[view.name], x.view(torch.int32))


def test_repro_of_a_graph_writing_into_its_input_carries_the_input_before_the_write(tmp_path):
    """repro.py's inputs are those the graph was given, not those it left (the writer ran it)."""
    graphs = captured(tmp_path, """
        def f(x):
            y = x.view(torch.int32) * 2
            x[:, 2:5] = 2
            return y.view(torch.int64)
        torch.compile(f)(torch.zeros(2, 6, dtype=torch.int64))
    """)
    gm, inputs = load_graph(graphs[0])
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="differs",
                     setup=CompileSetup(CompileSpec(), []), source="form.py, graph 0 of 1",
                     script="form.py", graph=0)
    write_repro(tmp_path / "repro", gm, inputs, info)
    namespace: dict = {"__name__": "written_repro"}  # not __main__: only its definitions run
    exec(compile((tmp_path / "repro" / "repro.py").read_text(), "repro.py", "exec"), namespace)
    assert torch.equal(namespace["make_inputs"]()[0], torch.zeros(2, 6, dtype=torch.int64))


@pytest.mark.slow
def test_repro_fails_where_fp64_has_no_number_at_a_difference(tmp_path):
    """The atan2+amin backward case: `eq` on a recomputed value is all False in fp64, so the
    reference is NaN where compiled differs; the oracle calls that a failure, and so must repro.py
    (it said NOT REPRODUCED, and minify ended in exit 4)."""
    class SameAfterRounding(torch.nn.Module):
        def forward(self, x):
            same = (x + 1e-8) == x  # all True in float32, all False in float64
            return (torch.neg(x) / same.sum(),)

    gm = torch.fx.symbolic_trace(SameAfterRounding())
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="differs",
                     setup=CompileSetup(CompileSpec(), [inject.parse_spec("neg:accuracy:double").to_dict()]),
                     source="x.py, graph 0 of 1", script="x.py", graph=0)
    write_repro(tmp_path / "repro", gm, [torch.linspace(1, 2, 8)], info)
    proc = subprocess.run([sys.executable, str(tmp_path / "repro" / "repro.py")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1 and proc.stdout.startswith("REPRODUCED"), proc.stdout + proc.stderr[-2000:]


@pytest.mark.e2e
@pytest.mark.corpus
def test_minify_reduces_the_public_dtype_view_case_to_a_verified_repro(tmp_path):
    """pytorch/pytorch#198101: a read of x through x.view(int32) is computed after a later write
    into x. Captured, replayed as a graph and reduced, with a repro that reproduces."""
    script = tmp_path / "dtype_view.py"
    script.write_text(textwrap.dedent("""
        import torch
        def fn(x):
            y = x.view(torch.int32) * 2
            y.sub_(-4)
            x[:, 2:5] = 2
            return y.view(torch.int64)
        x = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)
        assert torch.equal(fn(x.clone()), torch.compile(fn)(x.clone()))
    """))
    proc = run_minify([str(script), "-o", str(tmp_path / "out"), "--no-blame"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "internal error" not in proc.stdout + proc.stderr
