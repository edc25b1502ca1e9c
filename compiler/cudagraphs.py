"""CUDA graphs (mode="reduce-overhead", triton.cudagraphs): a bug they bring shows at a later call.

Inductor's cudagraph trees run a compiled graph's first call as a warm-up (no CUDA graph), record
a CUDA graph at the second and replay it from the third on. A graph checked only at its first
call (as every other graph is) would never show a bug of the recording or the replay: stale
static inputs, an output overwritten by the next replay, a mutation lost across replays. So the
capture checks such a graph's calls up to CHECKED_CALLS, each against eager on a copy of that
call's own inputs (`checked_call`), and a failure first seen at call n keeps that call's inputs.
Every later question about the graph (a worker's check, repro.py) calls the compiled graph
n - 1 times on inputs of the same kind filled with zeros (`prime`) before the judged call: the
call sequence the bug needs. The rung below it is the same compile without CUDA graphs
(`without_cudagraphs`): where that passes, the failure is CUDA graphs'.
"""
from __future__ import annotations

import contextlib
from dataclasses import replace

import torch

from compiler.stages import CompileSpec

CHECKED_CALLS = 4  # warm-up, record, two replays
MODES_WITH = {"reduce-overhead": None, "max-autotune": "max-autotune-no-cudagraphs"}  # -> the mode without
FLAG = "triton.cudagraphs"


def uses_cudagraphs(spec: CompileSpec) -> bool:
    """Does this torch.compile call (its mode, options or Inductor config) turn CUDA graphs on?"""
    for where in (spec.options or {}, spec.config or {}):
        if FLAG in where:
            return bool(where[FLAG])
    return spec.mode in MODES_WITH


def without_cudagraphs(spec: CompileSpec) -> CompileSpec:
    """The same compile with CUDA graphs off, and nothing else changed."""
    changes: dict = {}
    if spec.mode in MODES_WITH:
        changes["mode"] = MODES_WITH[spec.mode]
    if FLAG in (spec.options or {}):
        changes["options"] = {**spec.options, FLAG: False}
    if FLAG in (spec.config or {}):
        changes["config"] = {**spec.config, FLAG: False}
    return replace(spec, **changes)


def checks_call(spec: dict, call: int, args) -> bool:
    """Is the script's call number `call` (from 1) of a graph compiled with `spec`
    (CompileSpec.to_dict()) on `args` checked? Only where CUDA graphs can run: on CUDA inputs."""
    return 1 < call <= CHECKED_CALLS and uses_cudagraphs(CompileSpec.from_dict(spec)) and \
        any(isinstance(x, torch.Tensor) and x.is_cuda for x in args)


def priming_inputs(inputs: list) -> list:
    """Inputs of the calls before the judged one: copies of each input's kind (its class, such as
    a Parameter, shape, strides, dtype, device, requires_grad: a guard that failed would compile
    another graph, whose CUDA graphs warm up afresh), filled with zeros."""
    from compiler.oracle import clone_input

    def zero(x):
        if not isinstance(x, torch.Tensor):
            return x
        z = clone_input(x)
        with contextlib.suppress(RuntimeError):  # a ZeroTensor is zeros already
            z.detach().zero_()
        return z
    return [zero(x) for x in inputs]


def prime(compiled, inputs: list, calls: int) -> None:
    """Call `compiled` `calls` times before the judged call (warm-up, recording, replays)."""
    for _ in range(calls):
        compiled(*priming_inputs(inputs))


def checked_call(compiled, args: tuple, check) -> object:
    """The script's call of the compiled graph, judged: `check(inputs, stand_in)` gets a copy of
    the inputs as they were before the call and a stand-in for the compiled graph that returns a
    copy of what this call returned (a CUDA graph's outputs live in its pool, and the next replay
    overwrites them) and makes the writes this call made into its inputs (a BatchNorm's running
    statistics: the oracle compares written inputs too). Returns what the call returned."""
    from compiler.oracle import clone_inputs

    before = clone_inputs(list(args))
    out = compiled(*args)
    seen = torch.utils._pytree.tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, out)
    writes = {i: x.detach().clone() for i, (x, b) in enumerate(zip(args, before)) if _written(x, b)}

    def stand_in(*copies):
        with torch.no_grad():
            for i, value in writes.items():
                copies[i].detach().copy_(value)
        return seen

    check(before, stand_in)
    return out


def _written(after, before) -> bool:
    """Did the call change this input's values (a dense tensor of the same shape)?"""
    if not isinstance(after, torch.Tensor) or not isinstance(before, torch.Tensor) or after.shape != before.shape:
        return False
    try:
        return not torch.equal(after, before)
    except RuntimeError:  # a kind torch.equal does not take (sparse, ...): not judged as written
        return False


PRIMED_HELPER = '''def primed(compiled, calls):
    """CUDA graphs warm up at the first call, record at the second and replay after: the bug shows
    at call number calls + 1, so the compiled graph runs `calls` times first (on zeros of the same kinds)."""
    def zero(x):  # the input's own kind (a Parameter stays one: no other graph is compiled), zeros
        if not isinstance(x, torch.Tensor):
            return x
        z = torch.zeros_like(x).requires_grad_(x.requires_grad)
        return torch.nn.Parameter(z, x.requires_grad) if isinstance(x, torch.nn.Parameter) else z
    for _ in range(calls):
        compiled(*[zero(x) for x in make_inputs()])
    return compiled'''


def obeying(kwargs: dict, config: dict | None) -> dict:
    """torch.compile's keyword arguments with a config that turns CUDA graphs off obeyed: the
    mode's or options' own triton.cudagraphs would win over a config patched around the compile
    (a blame experiment's flip)."""
    if (config or {}).get(FLAG, True) is not False:
        return kwargs
    spec = without_cudagraphs(CompileSpec(mode=kwargs.get("mode"), options=kwargs.get("options")))
    kept = {k: v for k, v in kwargs.items() if k not in ("mode", "options")}
    return {**kept, **({"mode": spec.mode} if spec.mode else {}), **({"options": spec.options} if spec.options else {})}
