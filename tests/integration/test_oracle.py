"""The one oracle, on real eager and real Inductor runs."""
import torch

from compiler.oracle import check, clone_input, compare
from compiler.signature import normalize


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def test_integer_and_bool_outputs_are_compared_exactly():
    a = torch.tensor([1, 2, 3])
    assert compare(a, a.clone())[0]
    assert not compare(a, a + torch.tensor([0, 0, 1]))[0]
    b = torch.tensor([True, False])
    assert not compare(b, ~b)[0]


def test_float_noise_passes_and_real_error_fails():
    torch.manual_seed(0)
    x = torch.randn(1000)
    ref = x.double()
    assert compare(x, x + 1e-7, ref)[0]
    ok, metrics = compare(x, x + 1, ref)
    assert not ok and metrics[0]["max_abs_err"] > 0.9 and metrics[0]["mismatch_fraction"] == 1.0


def test_compiled_relu_accuracy_bug_fails_and_fix_passes():
    torch._dynamo.reset()
    model = Fn(torch.relu)
    x = [torch.randn(64)]
    with torch._inductor.config.patch({"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}):
        outcome = check(model, x, torch.compile(model))
    assert outcome.status == "fail" and outcome.kind == "accuracy" and outcome.signature == "accuracy@inductor"
    torch._dynamo.reset()
    assert check(model, x, torch.compile(model)).status == "pass"


def test_compile_error_signature_is_normalized():
    torch._dynamo.reset()
    model = Fn(lambda x: torch.relu(x) + 1)
    with torch._inductor.config.patch({"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}):
        outcome = check(model, [torch.randn(8)], torch.compile(model))
    assert outcome.status == "fail" and outcome.kind == "compile_error"
    assert outcome.signature == "compile_error@inductor|CppCompileError|error: 'compile' was not declared in this scope"


def test_nondeterministic_eager_is_invalid():
    model = Fn(lambda x: x + torch.rand_like(x))
    outcome = check(model, [torch.zeros(8)], model)
    assert outcome.status == "invalid" and outcome.kind == "nondeterministic"


def test_a_number_where_eager_has_nan_is_the_nan_inf_rung():
    """Eager's NaN is the answer: compiled returning a number there fails, at any tolerance."""
    model = Fn(lambda x: torch.log(x))
    wrong = Fn(lambda x: torch.zeros_like(x))
    outcome = check(model, [torch.tensor([-1.0, 2.0])], wrong)
    assert outcome.status == "fail" and outcome.rung == "nan_inf" and outcome.signature == "accuracy@inductor|nan_inf"


def test_eager_error_is_invalid():
    model = Fn(lambda x: x.view(3, 5))
    assert check(model, [torch.ones(4)], model).status == "invalid"


def test_mutated_inputs_are_outputs_too():
    def good(x):
        x.add_(1)
        return x.sum()

    def bad(x):
        x.add_(2)
        return (x - 1).sum()

    assert check(Fn(good), [torch.ones(4)], Fn(bad)).status == "fail"


def test_an_input_written_with_the_bits_it_held_is_judged_as_written():
    """Eager's relu_ of values >= 0 writes the bits its input held; a compiled relu_ that writes
    others is a wrong value there, not an "output structure differs" that no repro.py checks."""
    from compiler.inject import injected, parse_spec

    torch._dynamo.reset()
    model = Fn(lambda x: (torch.nn.functional.relu(x, inplace=True),))
    with injected(parse_spec("relu:accuracy:double")):
        outcome = check(model, [torch.tensor([1.0, 2.0])], torch.compile(model))
    assert outcome.status == "fail" and outcome.signature == "accuracy@inductor", outcome
    assert outcome.message.startswith("out['input[0]']")


def test_clone_input_keeps_layout():
    base = torch.arange(40.0).reshape(5, 8)
    view = base.t()[1:, 2:]
    copy = clone_input(view)
    assert copy.stride() == view.stride() and copy.storage_offset() == view.storage_offset()
    assert torch.equal(copy, view) and copy.untyped_storage().data_ptr() != view.untyped_storage().data_ptr()


def test_normalize_strips_what_varies():
    a = normalize("/tmp/torchinductor_root/ab/cab12.cpp:15:33: error: 'tmp3' at 0x7f00ab")
    b = normalize("/tmp/torchinductor_root/zz/czz99.cpp:7:1: error: 'tmp12' at 0x10")
    assert a == b


def test_a_nan_both_produce_leaves_the_finite_values_to_be_judged():
    """A fully masked softmax row is NaN in eager and compiled alike; a user's graph like that
    was called unjudgeable although every finite value was wrong."""
    model = Fn(lambda x: torch.log(x))
    same_nan_wrong_elsewhere = Fn(lambda x: torch.log(x) + (x > 0).float())
    same_nan_right_elsewhere = Fn(lambda x: torch.log(x) * 1.0)
    x = torch.tensor([-1.0, 2.0, 3.0])
    wrong = check(model, [x], same_nan_wrong_elsewhere)
    assert wrong.status == "fail" and wrong.kind == "accuracy"
    assert check(model, [x], same_nan_right_elsewhere).status == "pass"


def test_repeated_compiled_runs_are_judged_against_one_eager_run_and_reference():
    """The k-of-k rule repeats the compiled run only: eager (twice) and the fp64 reference are
    computed once (`expected_of`), and each repeated run is judged as a full check judges it."""
    from compiler.oracle import Expected, check_against, expected_of

    torch._dynamo.reset()
    eager_calls = []

    class Counted(torch.nn.Module):
        def forward(self, x):
            eager_calls.append(1)
            return torch.relu(x)

    model, x = Counted(), [torch.randn(64)]
    with torch._inductor.config.patch({"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}):
        compiled = torch.compile(Fn(torch.relu))
        expected = expected_of(model, x)
        assert isinstance(expected, Expected) and len(eager_calls) == 4  # eager twice, fp64 once, traced once
        runs = [check_against(expected, x, compiled) for _ in range(3)]
        full = check(model, x, compiled)
    assert len(eager_calls) == 8  # the three repeated runs added none; the full check four
    assert all(r.__dict__ == full.__dict__ for r in runs) and full.signature == "accuracy@inductor"


def test_an_invalid_expectation_gives_each_run_its_own_outcome():
    from compiler.oracle import check_against, expected_of

    model = Fn(lambda x: x + torch.rand_like(x))
    invalid = expected_of(model, [torch.zeros(8)])
    first, second = (check_against(invalid, [torch.zeros(8)], model) for _ in range(2))
    assert first.kind == second.kind == "nondeterministic" and first is not second
    first.message += " (edited)"
    assert second.message == invalid.message


def test_runs_are_judged_without_tf32_and_the_users_flags_come_back():
    """cuDNN may pick a TF32 kernel for compiled's layout and not for eager's (a correct ViT patch
    embedding on an H200 landed 1000x further from fp64 than eager): every judged run, eager's and
    compiled's, sees TF32 off, and the script's own setting is restored after the check."""
    seen = []

    def model(x):
        seen.append((torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32))
        return x * 2

    from compiler.context import _set_tf32_flags, _tf32_flags

    before, frozen = _tf32_flags(), torch.backends.flags_frozen()
    torch.backends.disable_global_flags()  # as importing torch.testing._internal.common_utils does
    _set_tf32_flags((True, True))
    try:
        outcome = check(model, [torch.randn(4)], model)
        assert outcome.status == "pass"
        assert seen and set(seen) == {(False, False)}
        assert _tf32_flags() == (True, True)
    finally:
        _set_tf32_flags(before)
        setattr(torch.backends, "__allow_nonbracketed_mutation_flag", not frozen)  # as it was


def test_a_cuda_graph_records_tf32_and_the_numerics_verdict_names_it():
    """The capture records that TF32 was allowed where a CUDA graph ran (cuDNN allows it by
    default); a numerics verdict on such a graph names it as the likely cause, not as verified."""
    from types import SimpleNamespace

    from compiler.context import current_context
    from minifier.localize.numerics_hints import tf32_hint

    from compiler.context import _set_tf32_flags, _tf32_flags

    before = _tf32_flags()
    try:
        _set_tf32_flags((True, False))
        context = current_context("cuda")
        assert context["tf32"] == {"cudnn": True, "matmul": False} and "tf32" not in current_context("cpu")
        _set_tf32_flags((False, False))
        assert "tf32" not in current_context("cuda")
    finally:
        _set_tf32_flags(before)
    hint = tf32_hint(SimpleNamespace(index=3, record={"context": context}))
    assert len(hint) == 1 and "torch.backends.cudnn.allow_tf32 = True" in hint[0]["text"] and "graph 3" in hint[0]["text"]
    assert tf32_hint(SimpleNamespace(index=3, record={"context": {}})) == []
