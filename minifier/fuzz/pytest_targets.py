"""Fuzz Inductor from pytest: `test_pointwise = fuzz_test(ops=["neg", "exp", "add"])`.

`fuzz_test` turns the strategies of minifier.fuzz.strategies into an ordinary hypothesis
test, so a campaign can live in a project's test suite: hypothesis's example database
replays earlier failures first, pytest-xdist spreads test functions over processes, and
`--hypothesis-seed` fixes the draws. Each example is compiled in the test process and judged
by the tool's oracle (compiler.oracle.check); a failure raises an AssertionError that shows
the shrunk program. To turn a failure into a verified repro, run `minify fuzz` with the same
ops (or `minify` on a script that calls the program).

Compiled code that aborts takes the test process down with it; under pytest-xdist only that
worker is lost and replaced. `minify fuzz` checks examples in a separate worker instead.
"""
from __future__ import annotations

import hashlib
from typing import Callable, Iterable

from minifier.fuzz.campaign import to_device
from minifier.fuzz.drawn_program import Program
from minifier.fuzz.failures import Masks, classify
from minifier.fuzz.strategies import programs


def check_program(program: Program, injections: Iterable = (), device: str = "cpu",
                  atol: float | None = None, rtol: float | None = None):
    """Compile `program` with Inductor (with `injections` planted) and judge it against eager
    with the oracle; returns its Outcome (status pass / fail / invalid)."""
    from compiler import settings as compiler_settings
    from compiler.graph_code import module_from_source
    from compiler.grads import Backward, requiring_grad
    from compiler.inject import injected, parse_spec
    from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
    from compiler.oracle import check

    compiler_settings.apply()  # caches off, kernels compiled in-process: see compiler/settings.py
    model = module_from_source(program.module_source())
    inputs = [to_device(t, device) for t in program.input_list()]
    specs = [parse_spec(i) if isinstance(i, str) else i for i in injections]
    spec = CompileSpec(dynamic=True if program.dynamic else None)
    with injected(*specs), fresh_compile_state(spec):
        compiled = compile_for_stage(model, "inductor", spec)
        if program.backward:  # the inputs' gradients are judged too
            inputs, model, compiled = requiring_grad(inputs), Backward(model), Backward(compiled)
        return check(model, inputs, compiled, stage="inductor", atol=atol, rtol=rtol)


BACKWARD = 0.25  # the share of programs fuzz_test checks through backward, as `minify fuzz` does


def fuzz_test(ops: list[str] | None = None, dtypes: list[str] | None = None, *, max_steps: int = 3,
              max_examples: int = 20, injections: Iterable[str] = (), masks: Iterable[str] = (),
              device: str = "cpu", allow_nonfinite: bool = False, **settings_kwargs) -> Callable:
    """A hypothesis test function over drawn programs; assign it to a `test_*` name. About a
    `backward=` share (default BACKWARD) of the programs are checked through backward too
    (their inputs' gradients); `backward=0` checks forward only.

    `masks` are known failures not to report (an op, a signature prefix or a fuzz.json key);
    `settings_kwargs` go to hypothesis.settings (e.g. phases, database, derandomize)."""
    from hypothesis import HealthCheck, given, settings

    backward = float(settings_kwargs.pop("backward", BACKWARD))  # not a hypothesis setting
    known = Masks.parse(list(masks))
    injections = list(injections)
    strategy = programs(ops=ops, dtypes=dtypes, max_steps=max_steps, allow_nonfinite=allow_nonfinite,
                        device_type=device.split(":")[0], backward=backward)

    def fuzz_inductor(program: Program) -> None:
        outcome = check_program(program, injections, device)
        if outcome.status != "fail":
            return
        failure = classify(outcome.__dict__, program)
        if known.matches(failure):
            return
        raise AssertionError(f"{failure.key}: {outcome.message}\n{program!r}")

    # Every test made here has the same source; a digest of the arguments keeps their
    # entries in hypothesis's example database apart (the hook pytest.mark.parametrize uses).
    arguments = repr((ops, dtypes, max_steps, injections, sorted(masks), device, allow_nonfinite)
                     + ((backward,) if backward else ()))
    fuzz_inductor._hypothesis_internal_add_digest = hashlib.sha256(arguments.encode()).digest()
    config = settings(max_examples=max_examples, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                             HealthCheck.data_too_large, HealthCheck.large_base_example],
                      **settings_kwargs)
    return config(given(program=strategy)(fuzz_inductor))
