"""Generated source is valid, and means the graph, for every kind of constant; a candidate that
does not print, parse and trace back is rejected before it is tested.

FX writes a constant as its repr pasted into a template. Seen on a real uint8 program: a
reduction folded a constant in front of a method call and FX wrote `1.abs()`, which does not
parse; the run ended in a SyntaxError traceback.
"""
from __future__ import annotations

import builtins
import math
import operator
import struct

import pytest
import torch
import torch.fx as fx

from compiler.graph_code import module_from_source, module_source, printable, trace_module
from minifier.reduce.validate import validator, why_invalid, why_unprintable
from repro.literals import scalar_literal

INF, NAN = math.inf, math.nan
INT_EDGES = [v for dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
             for v in (torch.iinfo(dtype).min, torch.iinfo(dtype).max)] + [2 ** 64 - 1, -(2 ** 63) - 1, 0]
FLOATS = [-1.5, -0.0, 0.0, INF, -INF, NAN, 5e-324, -1.7976931348623157e308]
COMPLEX = [1 + 2j, 2j, -1j, complex(-0.0, 1.0), complex(1.0, -0.0), complex(INF, NAN), complex(NAN, -INF),
           complex(-0.0, -0.0)]


def _bits(v):
    """A value's identity, bit for bit (NaN by its bits, -0.0 apart from 0.0)."""
    if isinstance(v, torch.Tensor):
        v = torch.view_as_real(v) if v.is_complex() else v
        return (v.dtype, v.shape, v.contiguous().view(torch.uint8).tolist())
    if isinstance(v, bool) or isinstance(v, int):
        return (type(v), v)
    if isinstance(v, float):
        return (float, struct.pack("<d", v))
    if isinstance(v, complex):
        return (complex, struct.pack("<dd", v.real, v.imag))
    if isinstance(v, (tuple, list)):
        return tuple(_bits(x) for x in v)
    return v


def _graph(build, codegen=printable) -> fx.GraphModule:
    """A GraphModule as minify builds them (its own code printable), or with FX's codegen."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(build(graph, x))
    return fx.GraphModule(torch.nn.Module(), codegen(graph))  # builds its own code: must not raise


def _roundtrip(gm: fx.GraphModule, *inputs):
    """The output of `gm` run from its generated source; the source must parse and trace back."""
    source = module_source(gm)
    compile(source, "<test>", "exec")
    assert why_unprintable(gm) is None, source
    return module_from_source(source)(*inputs), source


def _const(value):
    return lambda g, x: (g.call_function(operator.add, (value, 0)) if not isinstance(value, bool)
                         else g.call_function(operator.and_, (value, True)), x)


@pytest.mark.parametrize("value", INT_EDGES + [True, False] + FLOATS + COMPLEX, ids=repr)
def test_every_constant_kind_prints_parses_and_keeps_its_bits(value):
    gm = _graph(_const(value))
    out, source = _roundtrip(gm, torch.ones(1))
    expected = value & True if isinstance(value, bool) else value + 0
    assert _bits(out[0]) == _bits(expected), source


@pytest.mark.parametrize("value", FLOATS + [-3, True] + COMPLEX, ids=repr)
def test_constants_as_tensor_operands(value):
    dtype = torch.complex128 if isinstance(value, complex) else torch.float64
    x = torch.tensor([1.5, -2.0, 0.0], dtype=dtype)
    gm = _graph(lambda g, x: (g.call_function(torch.mul, (x, value)),
                              g.call_function(torch.add, (x,), {"other": [value][0], "alpha": 1}),
                              g.call_function(operator.mul, (x, value))))
    out, source = _roundtrip(gm, x)
    assert _bits(out) == _bits((torch.mul(x, value), torch.add(x, value, alpha=1), x * value)), source


def test_a_negative_base_keeps_its_meaning():
    """`-2 ** x` is -(2 ** x): the base needs parentheses, in the source and in FX's own code."""
    x = torch.tensor([1, 2, 3])
    gm = _graph(lambda g, x: (g.call_function(operator.pow, (-2, x)), g.call_function(operator.neg, (-1,)),
                              g.call_function(operator.sub, (x, -0.0))))
    out, source = _roundtrip(gm, x)
    assert out[0].tolist() == [-2, 4, -8] and out[1] == 1, source
    assert gm(x)[0].tolist() == [-2, 4, -8]
    assert "(-2) ** x" in source
    plain = _graph(lambda g, x: (g.call_function(operator.pow, (-2, x)),), codegen=lambda graph: graph)
    assert "(-2) ** x" in module_source(plain)  # whatever codegen the graph has


def test_the_compiler_under_test_is_left_as_it_is():
    """Only graphs minify builds print this way: FX's own codegen (Dynamo's graphs, the workers'
    compiles, repro.py) is not patched, so a bug in it stays visible to minify."""
    assert fx.Graph.python_code.__module__ == "torch.fx.graph"
    assert type(fx.Graph()._codegen) is fx.graph.CodeGen


def test_a_method_called_on_a_folded_constant():
    """`(1).bit_length()` parses and runs; `1.bit_length()` does not parse."""
    gm = _graph(lambda g, x: (g.call_method("bit_length", (255,)), g.call_method("conjugate", (-3,)),
                              g.call_function(builtins.getattr, (-1.5, "real")),
                              g.call_method("conjugate", (complex(INF, NAN),)), x))
    out, source = _roundtrip(gm, torch.ones(1))
    assert out[:3] == (8, -3, -1.5), source
    assert _bits(out[3]) == _bits(complex(INF, NAN).conjugate())
    assert "(255).bit_length()" in source and "(-1.5).real" in source


def _reduced_onto_a_constant() -> tuple[fx.GraphModule, fx.GraphModule]:
    """(a real graph, the candidate a reduction makes of it by folding `1` into `x.abs()`)."""
    source = ("import torch\n\n\nclass Repro(torch.nn.Module):\n"
              "    def forward(self, x):\n        abs_1 = x.abs()\n        neg = torch.neg(abs_1)\n"
              "        return (neg,)\n")
    gm = trace_module(module_from_source(source))
    candidate = fx.GraphModule(torch.nn.Module(), printable(_copy(gm.graph)))
    node = next(n for n in candidate.graph.nodes if n.op == "call_method")
    node.args = (1,)
    candidate.recompile()  # FX used to write `1.abs()` here and raise SyntaxError
    return gm, candidate


def _copy(graph: fx.Graph) -> fx.Graph:
    new = fx.Graph()
    env: dict = {}
    for node in graph.nodes:
        env[node] = new.node_copy(node, lambda n: env[n])
    return new


def test_an_invalid_candidate_is_rejected_not_run():
    gm, candidate = _reduced_onto_a_constant()
    values = {"x": torch.tensor([3, 200], dtype=torch.uint8)}
    assert why_invalid(gm, values) is None
    why = why_unprintable(candidate)
    assert why is not None and "does not trace" in why and "abs" in why
    assert why_invalid(candidate, values) == why
    check = validator(values, base=gm)
    assert check(gm) is None and check(candidate) == why
    assert "(1).abs()" in module_source(candidate)


def test_source_that_does_not_mean_the_graph_is_rejected(monkeypatch):
    """If printing ever drops or changes an op, the round trip says so."""
    gm, _ = _reduced_onto_a_constant()
    import minifier.reduce.validate as validate

    monkeypatch.setattr(validate, "module_source", lambda g: module_source(g).replace("torch.neg(abs_1)", "abs_1"))
    assert "other ops" in why_unprintable(gm)


@pytest.mark.parametrize("value", INT_EDGES + [True, False, None] + FLOATS + COMPLEX, ids=repr)
def test_scalar_input_literals_evaluate_back_exactly(value):
    text = scalar_literal(value)
    assert _bits(eval(text, {})) == _bits(value), text
