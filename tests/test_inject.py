"""Planted codegen bugs change real Inductor output, go away when removed, and survive
in a standalone script."""
import subprocess
import sys

import pytest
import torch

from compiler.inject import Injection, injected, injection_source, parse_spec


def _compiled_neg(x):
    torch._dynamo.reset()
    return torch.compile(lambda t: torch.neg(t) + 1)(x)


def test_injected_neg_changes_compiled_output_until_removed():
    x = torch.randn(33)
    with injected(Injection("neg", "accuracy", "double")):
        assert not torch.allclose(_compiled_neg(x), -x + 1)
    assert torch.allclose(_compiled_neg(x), -x + 1)


def test_parse_spec():
    inj = parse_spec("log1p:accuracy:negate@cpp,cppvec")
    assert (inj.op, inj.kind, inj.form, inj.paths) == ("log1p", "accuracy", "negate", ("cpp", "cppvec"))
    with pytest.raises(ValueError):
        parse_spec("neg:wrong_kind")


def test_unknown_op_is_refused():
    with pytest.raises(ValueError):
        with injected(Injection("no_such_op", paths=("cpp",))):
            pass


def test_injection_source_plants_the_bug_in_a_fresh_process(tmp_path):
    code = "import torch\n" + injection_source([Injection("neg", "accuracy", "double")]) + (
        "x = torch.randn(33)\n"
        "y = torch.compile(lambda t: torch.neg(t) + 1)(x)\n"
        "print(torch.allclose(y, -x + 1))\n")
    script = tmp_path / "planted.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]
