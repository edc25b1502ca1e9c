"""compiler/custom_ops.py with real torch.library registrations: a graph calling a user's custom op
carries its definition in its source (a fresh process registers the op from it alone), an op
minify cannot carry is one sentence, and a wrong fake is found on the graph's real inputs."""
import importlib.util
import subprocess
import sys

import pytest
import torch
import torch.fx as fx

from compiler.custom_ops import BEGIN, UncarriedOp, carried_ops, definitions, definition_faults
from compiler.graph_code import module_source

OPS = '''\
import torch

OFFSET = 0.5


def _shift(x):
    return x + OFFSET


@torch.library.custom_op("minify_test_carry::shift", mutates_args=())
def shift(x: torch.Tensor) -> torch.Tensor:
    return _shift(x) * 2


@shift.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("minify_test_carry::rowsum", mutates_args=())
def rowsum(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=1)


@rowsum.register_fake
def _(x):
    return torch.empty_like(x)  # wrong: the op drops dim 1


@torch.library.custom_op("minify_test_carry::fill_into", mutates_args=("dst",))
def fill_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    dst.copy_(src)


def make_hidden():
    @torch.library.custom_op("minify_test_carry::hidden", mutates_args=())
    def hidden(x: torch.Tensor) -> torch.Tensor:
        return x - 1


def main():
    raise SystemExit("the program's main must never be carried")
'''


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    path = tmp_path_factory.mktemp("ops") / "user_ops.py"
    path.write_text(OPS)
    spec = importlib.util.spec_from_file_location("minify_test_user_ops", path)
    module = importlib.util.module_from_spec(spec)  # not in sys.modules: it cannot be imported by name
    spec.loader.exec_module(module)
    module.make_hidden()
    return module


def graph_calling(op) -> fx.GraphModule:
    return fx.symbolic_trace(lambda x: op(torch.cos(x)))


def test_a_graph_source_carries_the_op_definition_into_a_fresh_process(ops, tmp_path):
    source = module_source(graph_calling(torch.ops.minify_test_carry.shift.default))
    assert BEGIN in source and "def _shift" in source and "OFFSET = 0.5" in source
    assert "def main" not in source and "make_hidden" not in source
    # every top-level op of the namespace in one block: a graph calling another reuses it, never defines twice
    ops_defined = ["minify_test_carry::fill_into", "minify_test_carry::rowsum", "minify_test_carry::shift"]
    assert carried_ops(source) == ops_defined  # what the parent remembers, and issue.md names
    assert definitions(graph_calling(torch.ops.minify_test_carry.rowsum.default)) in source
    program = tmp_path / "replay.py"
    program.write_text(source + "\nprint(Repro()(torch.zeros(3)).tolist())\n")
    run = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[3.0, 3.0, 3.0]"  # (cos(0) + 0.5) * 2
    assert module_source(graph_calling(torch.ops.minify_test_carry.shift.default)) == source  # loads again here


def test_an_op_defined_inside_a_function_of_a_module_that_cannot_be_imported_is_one_sentence(ops):
    with pytest.raises(UncarriedOp, match=r"minify_test_carry::hidden.*inside a function"):
        definitions(graph_calling(torch.ops.minify_test_carry.hidden.default))


def test_a_wrong_fake_is_found_on_the_real_inputs_and_a_right_one_is_not(ops):
    x = torch.randn(4, 6)
    found = definition_faults(graph_calling(torch.ops.minify_test_carry.rowsum.default), [x])
    assert len(found) == 1 and "minify_test_carry::rowsum" in found[0] and "torch.Size([4])" in found[0]
    assert definition_faults(graph_calling(torch.ops.minify_test_carry.shift.default), [x]) == []
    assert definition_faults(fx.symbolic_trace(lambda x: torch.cos(x)), [x]) == []



def test_an_op_packet_has_its_one_overloads_schema_so_the_reduction_sees_what_it_writes(ops):
    from compiler.custom_ops import op_schema
    from minifier.graph.nodes import overwritten_in_place

    gm = fx.symbolic_trace(lambda x: torch.ops.minify_test_carry.fill_into(torch.cos(x), x))  # the packet
    node = next(n for n in gm.graph.nodes if "fill_into" in str(n.target))
    assert op_schema(node.target).is_mutable and overwritten_in_place(gm) == {"x"}
    assert op_schema(torch.ops.aten.add) is None  # several overloads: no one schema


LIBRARY_OPS = '''\
import torch

lib = torch.library.Library("minify_test_lib", "DEF")
lib.define("twice(Tensor x) -> Tensor")


def twice_cpu(x):
    return x * 2


lib.impl("twice", twice_cpu, "CPU")
'''


def test_a_library_op_with_a_kernel_alone_is_found_in_the_users_module(tmp_path, monkeypatch):
    path = tmp_path / "user_library_ops.py"
    path.write_text(LIBRARY_OPS)
    spec = importlib.util.spec_from_file_location("minify_test_user_library_ops", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # imported as the script imports its own module
    spec.loader.exec_module(module)
    source = definitions(fx.symbolic_trace(lambda x: torch.ops.minify_test_lib.twice(x)))
    assert 'lib.define("twice(Tensor x) -> Tensor")' in source and 'lib.impl("twice", twice_cpu, "CPU")' in source
