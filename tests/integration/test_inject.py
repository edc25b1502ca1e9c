"""Planted codegen bugs change real Inductor output, go away when removed, and survive
in a standalone script."""
import subprocess
import sys

import pytest
import torch

from compiler.inject import Injection, apply, injected, injection_source, parse_spec, remove


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


@pytest.mark.slow
def test_injection_source_plants_the_bug_in_a_fresh_process(tmp_path):
    code = "import torch\n" + injection_source([Injection("neg", "accuracy", "double")]) + (
        "x = torch.randn(33)\n"
        "y = torch.compile(lambda t: torch.neg(t) + 1)(x)\n"
        "print(torch.allclose(y, -x + 1))\n")
    script = tmp_path / "planted.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]


def test_a_bug_planted_after_triton_routed_its_fp64_ops_still_prints():
    """TritonKernelOverrides routes sigmoid (and the other ops libdevice computes in fp64) through
    a functools.partial that keeps the implementation it found when first made: in a warm worker
    that compiled a Triton kernel before, a planted Triton sigmoid bug printed nothing (seen on the
    H200, torch 2.11: triton_sigmoid_compile_error ended in exit 4; repro.py, which carries
    patch_op, failed to reproduce in a warm interpreter). The router follows the patch, and
    removing the bug gives the router back."""
    import torch._inductor.lowering  # noqa: F401  (registers the ops routed to libdevice)
    from torch._inductor.codegen.triton import TritonKernelOverrides, TritonOverrides

    TritonKernelOverrides._setup_libdevice_routing()  # what the first Triton kernel of a process does
    router = TritonKernelOverrides.__dict__["sigmoid"]
    assert router.__func__.keywords["_original_impl"] is TritonOverrides.__dict__["sigmoid"].__func__
    applied = apply(Injection("sigmoid", "compile_error", None, ("triton",), None))
    try:
        patched = TritonOverrides.__dict__["sigmoid"].__func__
        assert TritonKernelOverrides.__dict__["sigmoid"].__func__.keywords["_original_impl"] is patched
        assert TritonKernelOverrides.__dict__["sigmoid"].__func__.func is router.__func__  # its keyword wins
    finally:
        remove(applied)
    assert TritonKernelOverrides.__dict__["sigmoid"] is router


@pytest.mark.slow
def test_repro_code_of_a_triton_bug_reroutes_what_triton_routed_before(tmp_path):
    """repro.py's planting code, run in a process whose Triton routing is already set up (as in a
    warm interpreter that compiled a Triton kernel), points the router at the patch too."""
    source = injection_source([Injection("sigmoid", "compile_error", None, ("triton",), None)])
    assert "reroute_copies(torch._inductor.codegen.triton.TritonOverrides, 'sigmoid')" in source
    check = (
        "import torch, torch._inductor.lowering\n"
        "from torch._inductor.codegen.triton import TritonKernelOverrides as K, TritonOverrides as T\n"
        "K._setup_libdevice_routing()\n"
        f"exec({source!r})\n"
        "assert K.__dict__['sigmoid'].__func__.keywords['_original_impl'] is T.__dict__['sigmoid'].__func__\n"
        "print('rerouted')\n")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.stdout.strip() == "rerouted", done.stderr[-2000:]
