"""compiler/op_source.py: the AST slice that carries a user's custom op definitions to other
processes holds the op, what registers more of it and what they name, and never the program's
own code."""
import ast

from compiler.op_source import slice_names, slice_ops, where_missing

CUSTOM_OP = '''\
"""A training script."""
from __future__ import annotations
import math
import os
import torch
import torch.nn as nn

SCALE = 3.0
UNUSED = os.getcwd()


def _factor():
    return SCALE * math.pi


@torch.library.custom_op("mylib::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * _factor()


@scale.register_fake
def _(x):
    return torch.empty_like(x)


def setup_context(ctx, inputs, output):
    pass


def backward(ctx, grad):
    return grad * _factor()


scale.register_autograd(backward, setup_context=setup_context)


class Net(nn.Module):
    def forward(self, x):
        return scale(x)


def main():
    print(torch.compile(Net())(torch.randn(3)))


warm = scale(torch.ones(2))

if __name__ == "__main__":
    main()
'''

LIBRARY = '''\
import torch

lib = torch.library.Library("oldlib", "DEF")
lib.define("twice(Tensor x) -> Tensor")
lib.define("other(Tensor x) -> Tensor")


@torch.library.impl(lib, "twice", "CPU")
def twice_cpu(x):
    return x * 2


@torch.library.register_fake("oldlib::twice")
def twice_fake(x):
    return torch.empty_like(x)


def f(x):
    return torch.ops.oldlib.twice(x)
'''

TRITON_OP = '''\
import torch
try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

BLOCK = 128


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)


@torch.library.triton_op("mylib::add", mutates_args=())
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    torch.library.wrap_triton(add_kernel)[(1,)](x, y, out, x.numel(), BLOCK_SIZE=BLOCK)
    return out


def run():
    return torch.compile(add)(torch.ones(3), torch.ones(3))
'''

INSIDE = '''\
import torch


def main():
    @torch.library.custom_op("mylib::hidden", mutates_args=())
    def hidden(x: torch.Tensor) -> torch.Tensor:
        return x + 1
'''

LAUNCHED = '''\
import torch
import triton
import triton.language as tl

SCALE = 2.0
x = torch.randn(40, device="cuda")


@triton.jit
def _square(v):
    return v * v * SCALE


@triton.jit
def square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _square(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


@torch.compile
def f(x):
    out = torch.empty_like(x)
    square_kernel[(3,)](x, out, x.numel(), BLOCK=16)
    return out


if __name__ == "__main__":
    print(f(x))
'''


def top_names(source: str) -> set[str]:
    names = set()
    for stmt in ast.parse(source).body:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return names


def test_a_custom_op_comes_with_its_fake_autograd_helpers_and_constants_and_nothing_of_the_program():
    cut = slice_ops(CUSTOM_OP, ["mylib::scale"])
    assert cut.found == ["mylib::scale"] and cut.missing == []
    assert top_names(cut.source) == {"SCALE", "_factor", "scale", "_", "setup_context", "backward"}
    assert "scale.register_autograd(backward" in cut.source
    assert "import math" in cut.source and "import torch" in cut.source
    for absent in ("__future__", "import os", "UNUSED", "class Net", "def main", "warm =", "__main__",
                   '"""A training script."""'):
        assert absent not in cut.source, absent
    compile(cut.source, "slice", "exec")  # it parses alone


def test_a_library_op_comes_with_its_definitions_and_kernels():
    cut = slice_ops(LIBRARY, ["oldlib::twice"])
    assert cut.found == ["oldlib::twice"]
    assert top_names(cut.source) == {"lib", "twice_cpu", "twice_fake"}
    assert 'lib.define("twice(Tensor x) -> Tensor")' in cut.source
    assert "def f(" not in cut.source


def test_a_triton_op_brings_its_jit_kernel_and_the_guarded_import():
    cut = slice_ops(TRITON_OP, ["mylib::add"])
    assert cut.found == ["mylib::add"]
    assert top_names(cut.source) == {"BLOCK", "add_kernel", "add"}
    assert "@triton.jit" in cut.source and "except ImportError:" in cut.source
    assert "def run(" not in cut.source


def test_an_op_defined_inside_a_function_is_missing_and_says_where():
    cut = slice_ops(INSIDE, ["mylib::hidden"])
    assert cut.found == [] and cut.missing == ["mylib::hidden"] and cut.source == ""
    assert "inside a function" in where_missing(INSIDE, "mylib::hidden")
    assert "C++ extension" in where_missing(LIBRARY, "mylib::nowhere")


def test_a_launched_kernel_comes_with_its_jit_helpers_and_constants_and_not_the_program():
    cut = slice_names(LAUNCHED, ["square_kernel", "nowhere"])
    assert cut.found == ["square_kernel"] and cut.missing == ["nowhere"]
    assert top_names(cut.source) == {"SCALE", "_square", "square_kernel"}
    assert "import triton.language as tl" in cut.source
    for absent in ("def f(", "torch.randn", "__main__"):
        assert absent not in cut.source, absent
    compile(cut.source, "slice", "exec")
