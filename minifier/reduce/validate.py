"""Is a candidate a well-formed program at all? Checked in the parent, before any compile.

Like llvm-reduce's verifier, every candidate must first be a program: it prints (FX turns it
into the very source a worker and repro.py run), that source parses, and it traces back into
a graph that does the same ops (so the source means the graph). A candidate that fails any of
these is answered `invalid` and never tested.

A reduction step can produce a graph that no compiler could be blamed for: a shrunk input
that no longer fits a hard-coded `view(8, 32, 100)`, an operand swapped for one of another
shape, a dangling node. Running the graph on fake tensors (shapes, strides and dtypes, no
data) catches these in milliseconds; such candidates are answered `invalid` without ever
reaching a worker.

What fake tensors cannot judge (data-dependent shapes, ops without a meta kernel) is given
the benefit of the doubt: the worker's eager run is the final word on validity.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException,
                                           FakeTensorMode, UnsupportedFakeTensorException,
                                           UnsupportedOperatorException)
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

from compiler.fp64_reference import BUFFERS
from compiler.graph_code import module_from_source, module_source, trace_module
from compiler.user_kernels import is_launch, launches
from minifier.graph.edit import has_side_effect, output_nodes, placeholders
from minifier.graph.input_transforms import apply_transform, step_of
from minifier.reduce.dry_run import cpu_inputs, indexes_by_value, why_index_fails

# Fake tensors could not tell: not a verdict on the candidate.
UNKNOWABLE = (DataDependentOutputException, DynamicOutputShapeException, UnsupportedFakeTensorException,
              UnsupportedOperatorException, NotImplementedError)


def fake_inputs(gm: fx.GraphModule, values: dict, mode: FakeTensorMode) -> list:
    """The candidate's inputs as fake tensors of `mode`, transforms applied."""
    args = []
    for p in placeholders(gm):
        value = values[p.meta.get("value", p.name)]
        if isinstance(value, torch.Tensor):
            fake = mode.from_tensor(value)
            with mode:
                value = apply_transform(fake, p.meta.get("transform"))
        args.append(value)
    return args


def fake_values(gm: fx.GraphModule, values: dict,
                retry: Callable[[fx.Node, Exception], bool] | None = None) -> dict[str, object]:
    """Fake (shape-only) value of every node of `gm` fed by the recorded inputs; raises when
    the graph cannot run on them. `retry(node, error)` may edit a failing node and return
    True to have it run again (how shrunk shapes repair hard-coded sizes)."""
    gm.graph.lint()
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    env: dict[str, object] = {}

    class Prop(FakeTensorProp):
        def run_node(self, n):
            try:
                result = super().run_node(n)
            except Exception as exc:
                if retry is None or not retry(n, exc):
                    raise
                result = super().run_node(n)
            env[n.name] = result
            return result

    with torch.no_grad():
        Prop(gm, mode).propagate_dont_convert_inputs(*fake_inputs(gm, values, mode))
    return env


def _ops(gm: fx.GraphModule) -> list[tuple[str, object]]:
    """The ops that depend on an input, in order (tracing folds ops on constants alone)."""
    live: set[fx.Node] = set()
    ops = []
    for n in gm.graph.nodes:
        if n.op == "placeholder" or any(a in live for a in n.all_input_nodes):
            live.add(n)
            if n.op not in ("placeholder", "output"):
                ops.append((n.op, n.target))
    return ops


def why_unprintable(gm: fx.GraphModule, same_ops: bool = True) -> str | None:
    """None when `gm` prints as source that parses and traces back (into the same ops, with
    `same_ops`); otherwise one line saying which of these it fails."""
    try:
        gm.graph.lint()
    except Exception as exc:
        return f"malformed graph: {type(exc).__name__}: {_first_line(exc)}"[:300]
    try:
        source = module_source(gm)
    except Exception as exc:
        return f"does not print as source: {type(exc).__name__}: {_first_line(exc)}"[:300]
    try:
        compile(source, "<candidate>", "exec")
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        return f"generated source does not parse: {exc.msg}: {line}"[:300]
    try:
        traced = trace_module(module_from_source(source))
    except Exception as exc:
        return f"generated source does not trace: {type(exc).__name__}: {_first_line(exc)}"[:300]
    if same_ops and _ops(traced) != _ops(gm):
        return "generated source traces into other ops than the graph's"
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def why_invalid(gm: fx.GraphModule, values: dict, fake: bool = True, same_ops: bool = True) -> str | None:
    """None when the candidate may run; otherwise one line saying why it cannot: it does not
    print, parse or trace back (why_unprintable, `same_ops` there), or (with `fake`) it cannot
    run on fake tensors of its inputs."""
    why = why_unprintable(gm, same_ops)
    if why:
        return why
    if not fake:
        return None
    try:
        fake_values(gm, values)
    except UNKNOWABLE:
        return None
    except Exception as exc:  # shape, dtype or structure errors: the candidate is broken
        return f"{type(exc).__name__}: {_first_line(exc)}"[:300]
    return None


def why_reads_garbage(gm: fx.GraphModule) -> str | None:
    """One line when the graph returns a kernel launch's None, or uses an uninitialized buffer
    (torch.empty and kin) while no op after it writes anything (a removed kernel launch, fill_ or
    copy_ left it unwritten): its values are whatever memory held, different in each run, so a
    difference it makes is no compiler's."""
    returned = [n for n in output_nodes(gm) if n.op == "call_function" and is_launch(n.target)]
    if returned:
        return f"returns {returned[0].name}, a kernel launch's result (None)"
    for node in gm.graph.nodes:
        name = str(node.target) if node.op == "call_method" else getattr(node.target, "__name__", "")
        if node.op not in ("call_function", "call_method") or name.split(".")[0] not in BUFFERS or not node.users:
            continue
        seen, todo = {node}, list(node.users)
        while todo:
            user = todo.pop()
            if user.op in ("call_function", "call_method") and has_side_effect(user):
                break
            todo += [u for u in user.users if u not in seen]
            seen |= set(user.users)
        else:
            return f"{node.name} (an uninitialized buffer, {name}) is used but nothing writes it"
    return None


def why_resizes_launches(gm: fx.GraphModule) -> str | None:
    """One line when a graph that launches a user Triton kernel has an input of another size than
    recorded: the launch's sizes (its `n`, its grid) are constants, so it would read and write
    past the smaller tensors (on the GPU, memory that is not theirs)."""
    if not launches(gm):
        return None
    shrunk = next((p for p in placeholders(gm) if step_of(p.meta.get("transform"), "shape")), None)
    return None if shrunk is None else f"{shrunk.name} is resized, and a kernel launch's sizes are constants"


def validator(values: dict, base: fx.GraphModule | None = None):
    """The check an Evaluator runs on each new candidate (see Evaluator.validate): only the
    checks that `base` (the graph being reduced) itself passes, so a graph that fake tensors
    or the round trip cannot model is not taken for a broken one. A CUDA graph that indexes by
    its values also runs eagerly on the CPU (minifier.reduce.dry_run)."""
    same_ops = base is None or why_unprintable(base) is None
    fake = base is None or why_invalid(base, values, same_ops=False) is None
    copies: dict = {}
    dry = base is not None and indexes_by_value(base) and cpu_inputs(base, values, copies) is not None \
        and why_index_fails(base, values, copies) is None
    garbage = base is None or why_reads_garbage(base) is None
    return lambda gm: why_invalid(gm, values, fake=fake, same_ops=same_ops) or \
        (why_reads_garbage(gm) if garbage else None) or why_resizes_launches(gm) or \
        (why_index_fails(gm, values, copies) if dry and indexes_by_value(gm) else None)
