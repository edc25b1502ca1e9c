"""compiler/user_kernels.py: a graph that launches a user's @triton.jit kernel carries the kernel
(and the helpers and constants it names) into its source and registers it under the loading
process's own table numbers, again for a candidate of the loaded graph; a launch is never
cleaned away, and a buffer it no longer writes makes a candidate invalid. Needs triton, not a
GPU: nothing is launched."""
import copy
import importlib.util

import pytest
import torch
import torch.fx as fx

triton = pytest.importorskip("triton")

from compiler.graph_code import module_from_source, module_source, trace_module  # noqa: E402
from compiler.user_kernels import BEGIN, UncarriedKernel, kernel_block, launched_inputs, launches  # noqa: E402
from minifier.graph.edit import clean  # noqa: E402
from minifier.reduce.validate import why_reads_garbage  # noqa: E402

KERNELS = '''\
import torch
import triton
import triton.language as tl

SCALE = 2.0
big = torch.zeros(4)


@triton.jit
def _square(v):
    return v * v * SCALE


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _square(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


def make_inner():
    @triton.jit
    def inner_kernel(x_ptr):
        pass
    return inner_kernel
'''


def _kernels(tmp_path):
    path = tmp_path / "my_kernels.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("my_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _launching(kernel, constants: dict) -> fx.GraphModule:
    """x -> empty_like -> the kernel writes it -> relu, as Dynamo writes a launch."""
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table, triton_kernel_wrapper_mutation

    g = fx.Graph()
    x = g.placeholder("x")
    out = g.call_function(torch.empty_like, (x,))
    g.call_function(triton_kernel_wrapper_mutation, (), {
        "kernel_idx": kernel_side_table.add_kernel(kernel), "grid": [(3, 1, 1)],
        "constant_args_idx": kernel_side_table.add_constant_args(constants), "tma_descriptor_metadata": {},
        "kwargs": {"x_ptr": x, "out_ptr": out}})
    g.output((g.call_function(torch.relu, (out,)),))
    return fx.GraphModule(torch.nn.Module(), g)


def _table(launch: fx.Node):
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    return (kernel_side_table.get_kernel(launch.kwargs["kernel_idx"]),
            kernel_side_table.get_constant_args(launch.kwargs["constant_args_idx"]))


def test_a_launch_carries_its_kernel_under_the_loading_table_numbers_and_again_from_the_loaded_file(tmp_path):
    module = _kernels(tmp_path)
    source = module_source(_launching(module.square_kernel, {"n": 40, "BLOCK": 16}))
    assert BEGIN in source and "def square_kernel(" in source and "def _square(" in source
    assert "SCALE = 2.0" in source and "kernel_idx = MINIFY_KERNELS[" in source
    assert "big =" not in source and "inner_kernel" not in source
    traced = trace_module(module_from_source(source, tmp_path))
    [launch] = launches(traced)
    kernel, constants = _table(launch)
    assert kernel is not module.square_kernel and kernel.fn.__name__ == "square_kernel"
    assert kernel.fn.__code__.co_filename != module.__file__ and constants == {"n": 40, "BLOCK": 16}
    again = module_source(traced)  # a candidate of the loaded graph: its kernel sliced from the loaded file
    assert again.count("def square_kernel(") == 1 and again.count("def _square(") == 1
    [launch] = launches(trace_module(module_from_source(again, tmp_path)))
    assert _table(launch)[0].fn.__name__ == "square_kernel"


def test_a_kernel_made_inside_a_function_is_said_to_be_uncarried(tmp_path):
    gm = _launching(_kernels(tmp_path).make_inner(), {})
    with pytest.raises(UncarriedKernel, match="inner_kernel"):
        kernel_block(gm)


def test_a_launch_is_never_cleaned_away_and_a_buffer_it_no_longer_writes_is_invalid(tmp_path):
    gm = _launching(_kernels(tmp_path).square_kernel, {"n": 40, "BLOCK": 16})
    assert len(launches(clean(copy.deepcopy(gm)))) == 1
    assert why_reads_garbage(gm) is None
    gm.graph.erase_node(launches(gm)[0])
    gm.recompile()
    assert "uninitialized buffer" in why_reads_garbage(gm)


def test_inputs_a_launch_is_given_through_a_view_count_as_written(tmp_path):
    gm = _launching(_kernels(tmp_path).square_kernel, {"n": 40, "BLOCK": 16})
    launch = launches(gm)[0]
    with gm.graph.inserting_before(launch):
        buffer = gm.graph.placeholder("buffer")
        flat = gm.graph.call_method("view", (buffer, -1))
    launch.kwargs = {**launch.kwargs, "kwargs": {**launch.kwargs["kwargs"], "out_ptr": flat}}
    assert launched_inputs(gm) == [0, 1]  # x (read, maybe written: a kernel's pointers say nothing) and buffer


def test_a_candidate_that_returns_a_launchs_none_is_invalid(tmp_path):
    gm = _launching(_kernels(tmp_path).square_kernel, {"n": 40, "BLOCK": 16})
    output = next(iter(gm.graph.find_nodes(op="output")))
    output.args = ((launches(gm)[0],),)
    gm.recompile()
    assert "kernel launch's result" in why_reads_garbage(gm)


def test_a_candidate_that_resizes_an_input_of_a_launching_graph_is_invalid(tmp_path):
    from minifier.graph.input_transforms import with_step
    from minifier.reduce.validate import why_resizes_launches

    gm = _launching(_kernels(tmp_path).square_kernel, {"n": 40, "BLOCK": 16})
    assert why_resizes_launches(gm) is None
    x = next(iter(gm.graph.find_nodes(op="placeholder")))
    x.meta["transform"] = with_step(None, ("shape", (8,)))
    assert "sizes are constants" in why_resizes_launches(gm)
