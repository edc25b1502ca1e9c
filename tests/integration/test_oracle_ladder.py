"""Every rung of the oracle's ladder, each on a program that shows it, compiled by real Inductor.

Real bugs from public PyTorch issues where torch 2.13 still has one (signed zero #194347, NaN
for a number #197108, strides #198364, bits of a float32 sum), planted ones elsewhere; and the
numerics that pass the ladder although compiled differs from eager (#182131, #183605,
#189808, #141436), which must come out as kind `numerics` with their evidence.
"""
import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection, injected
from compiler.oracle import check, exact_outputs, numerics_lines
from compiler.rungs import RUNGS, parse_ignore
from compiler.signature import rung_of


def judge(fn, inputs, injections=(), config=None, **kwargs):
    model = fx.symbolic_trace(fn)
    torch._dynamo.reset()
    with injected(*injections), torch._inductor.config.patch(config or {}):
        return check(model, inputs, torch.compile(model), **kwargs)


def fails_on(outcome, rung):
    assert outcome.status == "fail" and outcome.rung == rung, (outcome.status, outcome.rung, outcome.message)
    assert rung_of(outcome.signature) == rung
    return outcome


def test_exception_rung_planted_compile_error():
    outcome = judge(lambda x: torch.relu(x) + 1, [torch.randn(8)],
                    config={"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"})
    assert fails_on(outcome, "exception").kind == "compile_error"


def test_meta_rung_compiled_returns_another_dtype():
    model = fx.symbolic_trace(lambda x: x * 2)
    outcome = check(model, [torch.randn(4)], lambda x: (x * 2).double())  # planted: no real one found
    assert "dtype" in fails_on(outcome, "meta").message


def as_strided_over_a_repeat(x):  # issue 197431: Inductor makes full[:, ::2] a 3-element buffer of its own
    full = x.repeat((3, 2))
    return torch.as_strided(full[:, ::2], (3, 2), (2, 1))


def test_meta_rung_a_view_past_the_end_of_its_storage_issue_197431():
    # Compiled returns a (3, 2) view over 12 bytes: its values are whatever memory lies past the
    # end, so judging them gave a different answer each run (or raised in the ladder itself)
    outcomes = [judge(as_strided_over_a_repeat, [torch.randn(1, 1)]) for _ in range(3)]
    assert all("past the end of its storage" in fails_on(o, "meta").message for o in outcomes)
    assert len({o.signature for o in outcomes}) == 1


def test_nan_inf_rung_var_mean_of_an_empty_tensor_issue_197108():
    """Eager's mean of nothing is nan, Inductor's is 0 (its reduction's identity)."""
    outcome = fails_on(judge(lambda x: torch.var_mean(x), [torch.randn(0)]), "nan_inf")
    assert outcome.signature == "accuracy@inductor|nan_inf" and "eager nan, compiled 0.0" in outcome.message


def test_values_rung_planted_neg_doubled():
    outcome = judge(lambda x: torch.neg(x) + 1, [torch.randn(32)], [Injection("neg", form="double")])
    assert fails_on(outcome, "values").signature == "accuracy@inductor"  # the values rung: the plain signature


def test_values_rung_integers_are_exact_at_zero_tolerance():
    outcome = judge(lambda x: torch.neg(x), [torch.tensor([186, 3], dtype=torch.uint8)],
                    [Injection("neg", template="decltype({x})(decltype({x})(2) * {x})", paths=("cpp", "cppvec"))])
    assert "eager 70, compiled 116" in fails_on(outcome, "values").message


PLANTED_ULP = Injection("maximum", template="({out}) * decltype({out})(1.0000002)", paths=("cpp", "cppvec"))


def test_exact_rung_a_value_selecting_op_off_by_a_few_ulp():
    """maximum of two inputs must return one of them; 2 ulp off is within tolerance, not exact."""
    outcome = judge(lambda x, y: torch.maximum(x, y), [torch.randn(8), torch.randn(8)], [PLANTED_ULP])
    fails_on(outcome, "exact")


def test_exact_rung_only_where_every_input_of_the_op_is_exact():
    """maximum(3x, y): 3x is computed, so its result is judged by tolerance (numerics)."""
    outcome = judge(lambda x, y: torch.maximum(x * 3, y), [torch.randn(8), torch.randn(8)], [PLANTED_ULP])
    assert outcome.status == "pass" and outcome.kind == "numerics"


def test_signed_zero_rung_minimum_issue_194347_and_ignore():
    inputs = [torch.tensor([-0.0, 1.0]), torch.tensor([0.0, 2.0])]
    outcome = fails_on(judge(lambda x, y: torch.minimum(x, y), inputs), "signed_zero")
    assert "eager -0.0, compiled 0.0" in outcome.message
    assert judge(lambda x, y: torch.minimum(x, y), inputs, ignore=("signed_zero",)).status == "pass"


def test_signed_zero_is_not_asked_of_computed_values():
    """x * 0 is -0.0 or +0.0 by IEEE rules both sides agree on; only value-selecting ops are held to it."""
    outcome = judge(lambda x: x * 0.0, [torch.tensor([-1.0, 1.0])])
    assert outcome.status == "pass"


def test_layout_rung_copysign_of_a_transposed_input_issue_198364_and_ignore():
    torch.manual_seed(0)
    a, b = torch.rand(6, 5).mT, torch.rand(5, 6) + 1
    outcome = fails_on(judge(lambda a, b: torch.copysign(a, b - 1.5), [a, b]), "layout")
    assert outcome.kind == "layout" and outcome.signature == "layout@inductor|layout"
    assert "strides (6, 1), eager's (1, 5)" in outcome.message
    assert judge(lambda a, b: torch.copysign(a, b - 1.5), [a, b], ignore=("layout",)).status == "pass"


def test_layout_rung_sees_an_output_that_stops_being_a_view_of_its_input():
    model = fx.symbolic_trace(lambda x: x[1:])
    outcome = fails_on(check(model, [torch.randn(8)], lambda x: x[1:].clone()), "layout")  # planted
    assert "view of input 0" in outcome.message


def test_bitwise_rung_only_under_strict_a_float32_sum():
    torch.manual_seed(0)
    x = [torch.randn(64, 4096)]
    assert judge(lambda x: x.sum(-1), x).status == "pass"
    fails_on(judge(lambda x: x.sum(-1), x, strict=True), "bitwise")


def test_the_first_rung_that_differs_names_the_failure():
    """A NaN in one output and a wrong value in another: nan_inf comes first on the ladder."""
    outcome = judge(lambda x, e: (torch.neg(x) + 1, torch.var_mean(e)[1]), [torch.randn(8), torch.randn(0)],
                    [Injection("neg", form="double")])
    assert fails_on(outcome, "nan_inf").message.startswith("out[1]")
    assert RUNGS.index("nan_inf") < RUNGS.index("values")


@pytest.mark.parametrize("name, fn, inputs, how", [
    ("fp16 cast before add, #182131",
     lambda x, c: torch.where(c, torch.full_like(x, 0.5), torch.full_like(x, -0.5)).to(torch.float16)
     + x.to(torch.float16),
     [torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 10, (torch.arange(24) % 5 == 0).reshape(2, 3, 4)],
     "within tolerance"),
    ("fp16 var + rsqrt, #183605",
     lambda x: x * torch.rsqrt(x.var(dim=-1, keepdim=True) + 1e-9),
     [torch.full((3, 5), 1e-10, dtype=torch.float16)], "as the fp64 reference does"),
    ("sqrt of a negative number, #189808",
     lambda x: torch.sqrt(x) * 2, [torch.tensor([-1.0, 4.0] * 10)], "only in the sign of a NaN"),
])
def test_numerics_pass_the_ladder_with_evidence(name, fn, inputs, how):
    outcome = judge(fn, inputs)
    assert outcome.status == "pass" and outcome.kind == "numerics", (name, outcome)
    assert how in outcome.message and outcome.message == "; ".join(numerics_lines(outcome.metrics))


def test_numerics_evidence_has_errors_against_fp64_in_ulps():
    torch.manual_seed(0)
    Y, y = torch.randn(1, 6, 128, 4, 32, dtype=torch.bfloat16), torch.randn(1, 6, 128, 4)
    outcome = judge(lambda num, den: num / den.to(torch.bfloat16).unsqueeze(-1), [Y, y])  # issue 141436
    m = outcome.metrics[0]
    assert outcome.kind == "numerics" and m["max_abs_err"] > 0
    assert {"fp64_err_compiled", "fp64_ulp_compiled", "fp64_rel_compiled", "fp64_err_eager"} <= set(m)
    assert "ulp, rel" in outcome.message


def test_exact_outputs_follow_value_selecting_ops_from_the_inputs():
    def f(x, y):
        s = torch.sort(x)[0]
        return torch.maximum(x, y), torch.maximum(x * 2, y), s, torch.where(x > 0, s, y).clamp(min=0.0)

    gm = fx.symbolic_trace(f)
    value = gm(torch.randn(4), torch.randn(4))
    assert exact_outputs(gm, value) == {"out[0]", "out[2]", "out[3]"}


def test_ignore_accepts_commas_and_spaces_and_names_what_it_does_not_know():
    assert parse_ignore(["signed-zero,layout"]) == ("signed_zero", "layout")
    assert parse_ignore(["signed-zero", "layout"]) == parse_ignore("signed-zero layout")
    with pytest.raises(ValueError, match="'values'"):
        parse_ignore(["values"])


def test_the_reference_computes_in_fp64_what_the_graph_makes_from_integers():
    """float32 `gelu(+inf)` is NaN in eager (its own bug; fp64 gives inf) and inf compiled. The
    float32 values come from an int16 input, so widening the inputs alone would leave the
    reference in float32 and blame the compiler; every floating value is widened instead."""
    def gelu_of_lgamma(x):
        return torch.nn.functional.gelu(torch.lgamma(x))

    x = torch.tensor([0, -1, 3, 32767], dtype=torch.int16)
    outcome = judge(gelu_of_lgamma, [x])
    assert outcome.status == "pass", outcome.message
    if torch.isnan(gelu_of_lgamma(x)).any():  # eager's float32 gelu(inf) is NaN with AVX-512, inf with AVX2
        assert outcome.kind == "numerics" and "fp64 inf" in outcome.message, outcome.message
    # after a cast to float16 the reference goes on in fp64, as Inductor does in float32: eager's
    # float16 overflow is numerics (as #182131 was closed), not a compiler bug
    overflow = judge(lambda x: (x.to(torch.float16) * 2).float(), [torch.tensor([40000.0, 1.0])])
    assert overflow.status == "pass" and overflow.kind == "numerics", overflow.message
    assert "eager inf, compiled 80000.0, fp64 80000.0" in overflow.message


def test_the_fp64_reference_reads_a_strided_input_with_gaps_right():
    """Copying an input with its strides makes a buffer and gives it the input's storage; the
    fp64 mode widened that buffer too, so the copy read every other element and the reference
    was wrong (a float16 backward graph where eager's 1/(x*x) overflows to NaN was blamed on
    the compiler, which matched fp64: found by minify fuzz)."""
    base = torch.tensor([1e-5, 7.0, -6e-5, 7.0, 0.5, 7.0, 6e-5, 7.0, 0.445, 7.0], dtype=torch.float16)
    x = base.as_strided((1, 5), (10, 2))
    zeros = torch.zeros(5, 5, dtype=torch.float16)

    def scaled(x, w):
        return (w * (1.0 / (x * x)),)

    outcome = judge(scaled, [x, zeros])
    assert outcome.status == "pass" and outcome.kind == "numerics", outcome.message
    assert "as the fp64 reference does" in outcome.message


def test_the_shortcuts_judge_as_the_full_ladder_does():
    """An output whose bits all match skips the ladder, and one with no NaN or Inf skips the
    NaN/Inf masks (a big graph's outputs are judged in a fraction of the time): both must
    give what the masked path gives on the same finite values."""
    from compiler.ladder import compare_tensor, same_bits

    torch.manual_seed(0)
    eager = torch.randn(64, 32)
    reference = eager.double() + 1e-9
    for compiled in (eager.clone(), eager + 1e-6, eager * 1.01):
        plain = compare_tensor("o", eager, compiled, reference)
        nan = torch.tensor([[float("nan")] * 32])  # the same values with a NaN row in both: the masked path
        masked = compare_tensor("o", torch.cat([eager, nan]), torch.cat([compiled, nan]),
                                torch.cat([reference, nan.double()]))
        for key in ("ok", "rung", "max_abs_err", "max_rel_err", "max_ulp", "fp64_err_compiled", "fp64_ulp_eager"):
            assert plain.get(key) == masked.get(key), (key, plain, masked)
    assert same_bits(eager, eager.clone()) and not same_bits(torch.zeros(3), -torch.zeros(3))
    signed = compare_tensor("o", torch.zeros(3), -torch.zeros(3), torch.zeros(3).double(), exact=True)
    assert signed["rung"] == "signed_zero"  # equal values, other bits: never the shortcut


def test_a_zero_dim_output_that_differs_is_judged_with_its_fp64_evidence():
    from compiler.ladder import compare_tensor

    judged = compare_tensor("o", torch.tensor(1.0), torch.tensor(1.5), torch.tensor(1.0, dtype=torch.float64))
    assert judged["rung"] == "values" and judged["fp64_err_compiled"] == 0.5
