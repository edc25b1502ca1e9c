"""Every injection target changes real Inductor output (or breaks its compile), at the stage
and in the kernels it claims, goes away cleanly, and round-trips through its dict, its
spec string and the standalone source that repro.py carries."""
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from compiler import inject
from compiler.inject import Injection, injected, injection_source, parse_spec
from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
from compiler.oracle import check

torch.manual_seed(0)
X = torch.randn(16, 40)


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def outcome(fn, *args, stage="inductor"):
    """The oracle's verdict on `fn` compiled through `stage` (fresh Dynamo state)."""
    model = Fn(fn)
    spec = CompileSpec()
    with fresh_compile_state(spec):
        return check(model, list(args), compile_for_stage(model, stage, spec), stage=stage)


def glu(t):
    return t * torch.sigmoid(t + 1)


def embed(w, i):
    return F.embedding(i, w) * 2


# spec string, a function that uses the op, its arguments, the kind of failure it must cause
CASES = [
    ("lowering:sigmoid:accuracy:negate", lambda t: torch.sigmoid(t) * 2, (X,), "accuracy"),
    ("lowering:exp:compile_error", lambda t: torch.exp(t) + 1, (X,), "compile_error"),
    ("decomposition:gelu:accuracy:double", lambda t: F.gelu(t) + 1, (X,), "accuracy"),
    ("decomposition:hardswish:compile_error", lambda t: F.hardswish(t) * 3, (X,), "compile_error"),
    ("fusion:sigmoid+mul:accuracy:double", glu, (X,), "accuracy"),
    ("fusion:sigmoid+mul:compile_error", glu, (X,), "compile_error"),
    ("reduction:sum:one", lambda t: t.sum(-1), (X,), "accuracy"),
    ("reduction:prod:zero", lambda t: (t.abs() + 0.5).prod(-1), (X,), "accuracy"),
    ("indexing:off_by_one", embed, (torch.randn(10, 40), torch.randint(10, (7,))), "accuracy"),
    ("indexing:first", lambda t, i: torch.gather(t, 1, i), (X, torch.randint(1, 40, (16, 3))), "accuracy"),
]


@pytest.mark.parametrize("spec,fn,args,kind", CASES, ids=[c[0] for c in CASES])
def test_injection_breaks_inductor_and_is_removed_cleanly(spec, fn, args, kind):
    before = len(inject.ACTIVE)
    with injected(parse_spec(spec)):
        bad = outcome(fn, *args)
    assert (bad.status, bad.kind) == ("fail", kind), bad.message
    assert len(inject.ACTIVE) == before
    good = outcome(fn, *args)
    assert good.status == "pass", good.message


def test_decomposition_bug_shows_from_the_decomposition_stage_on():
    with injected(parse_spec("decomposition:gelu:accuracy:double")):
        answers = {s: outcome(lambda t: F.gelu(t) + 1, X, stage=s).status
                   for s in ("aot_eager", "aot_eager_decomp_partition", "inductor")}
    assert answers == {"aot_eager": "pass", "aot_eager_decomp_partition": "fail", "inductor": "fail"}


def test_lowering_bug_shows_only_in_inductor():
    with injected(parse_spec("lowering:sigmoid:accuracy:negate")):
        answers = {s: outcome(lambda t: torch.sigmoid(t) * 2, X, stage=s).status
                   for s in ("aot_eager_decomp_partition", "inductor")}
    assert answers == {"aot_eager_decomp_partition": "pass", "inductor": "fail"}


def test_fusion_bug_needs_both_ops_in_one_kernel():
    def separate(t):
        s = torch.sigmoid(t + 1)
        torch._dynamo.graph_break()  # the product is computed in another graph, from memory
        return t * s

    with injected(parse_spec("fusion:sigmoid+mul:accuracy:double")):
        assert outcome(glu, X).status == "fail"
        assert outcome(separate, X).status == "pass"
        assert outcome(lambda t, s: t * s, X, torch.sigmoid(X + 1)).status == "pass"  # mul alone, fed the value


def test_max_init_zero_hides_unless_every_value_is_negative():
    with injected(parse_spec("reduction:max:zero@cpp")):
        assert outcome(lambda t: t.amax(-1), X.abs() + 1).status == "pass"
        assert outcome(lambda t: t.amax(-1), -X.abs() - 1).status == "fail"


@pytest.mark.parametrize("spec", ["fusion:sigmoid+mul:accuracy:double", "indexing:off_by_one"])
def test_paths_choose_the_kernels(spec):
    fn, args = (glu, (X,)) if spec.startswith("fusion") else (embed, (torch.randn(10, 40), torch.randint(10, (7,))))
    with injected(parse_spec(spec + "@cppvec")):
        assert outcome(fn, *args).status == "fail"  # these kernels are vectorized
    with injected(parse_spec(spec + "@cpp")):
        assert outcome(fn, *args).status == "pass"


def test_specs_round_trip_through_dict_and_string():
    for spec, *_ in CASES + [("neg:accuracy:double@cpp", None, None, None), ("reduction:max:zero@triton", 0, 0, 0)]:
        inj = parse_spec(spec)
        assert Injection.from_dict(inj.to_dict()) == inj
    assert Injection.from_dict({"op": "neg", "kind": "accuracy"}) == Injection("neg")  # dicts from before targets
    hang = parse_spec("relu:runtime_error:hang")
    assert hang.printed_paths() == ("cpp", "cppvec") and "triton" not in injection_source([hang])
    for bad in ["reduction:sum:zero", "reduction:mean", "indexing:sideways", "fusion:sigmoid",
                "lowering:sigmoid:runtime_error", "decomposition:gelu:accuracy:sideways", "nosuchtarget:x:y",
                "relu:runtime_error:hang@triton"]:  # a hang is printed in C++ alone: no GPU kernel that never ends
        with pytest.raises(ValueError):
            parse_spec(bad)


@pytest.mark.slow
def test_injection_source_plants_every_target_in_a_fresh_process(tmp_path):
    specs = ["lowering:sigmoid:accuracy:negate", "decomposition:gelu:accuracy:double", "fusion:exp+mul",
             "reduction:sum:one", "indexing:off_by_one", "neg:accuracy:double"]
    checks = [("torch.sigmoid(x) * 2", "x"), ("torch.nn.functional.gelu(x) + 1", "x"), ("torch.exp(x) * x", "x"),
              ("x.sum(-1)", "x"), ("torch.nn.functional.embedding(i, x) * 2", "x, i"), ("torch.neg(x) + 1", "x")]
    body = "".join(
        f"f = lambda {args}: {expr}\ntorch._dynamo.reset()\n"
        f"print(torch.allclose(torch.compile(f)({args}), f({args}), atol=1e-5))\n" for expr, args in checks)
    script = tmp_path / "planted.py"
    script.write_text("import torch\nimport torch._functorch.config\nimport torch._inductor.config\n"
                      + injection_source([parse_spec(s) for s in specs])
                      + "x = torch.randn(8, 40)\ni = torch.randint(8, (5,))\n" + body)
    out = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=600)
    assert out.stdout.split() == ["False"] * len(checks), out.stdout + out.stderr[-3000:]
