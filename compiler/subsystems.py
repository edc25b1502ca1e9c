"""Switches inside Inductor that blame experiments flip, one named experiment at a time.

`minify bisect` (minifier/blame/search.py) asks which part of the compiler a minimal repro needs in
order to fail. Each question is an `Experiment`: Inductor config to patch, applications of a
compiler subsystem to skip (a decomposition, a graph pass, a node's lowering), nodes to keep
out of shared kernels, a device to run on. `applied(experiment, record)` turns it on for one
compile and, when asked, records what the compiler did (which decompositions, passes and
lowerings it applied) so the search knows what there is to switch off.

Everything that touches torch internals lives here, behind small adapters:
- Subsystems go through `CompilerBisector.disable_subsystem`, which Inductor consults before
  each decomposition (proxy_tensor), pass (GraphTransformObserver) and lowering (GraphLowering).
  We replace that one classmethod for the duration of a compile instead of driving the
  bisector's file-based state machine, so skipping is by name and needs no env variables.
- Fusion: a kept-apart node's result is realized right after its lowering (no inlining into
  its consumers) and the scheduler may not fuse any kernel that computes it.
Where an adapter's target is missing (another torch version), `Unavailable` says so and the
search skips that experiment instead of failing.
"""
from __future__ import annotations

import contextlib
import re
from dataclasses import asdict, dataclass, field
from typing import Iterator

import torch

ALL = "*"  # every application of a subsystem, every node

# Subsystem names as Inductor passes them to CompilerBisector.disable_subsystem.
DECOMPOSITION = "decomposition"
PASS_SUBSYSTEMS = ("pre_grad_passes", "joint_graph_passes", "post_grad_passes")
LOWERINGS = "lowerings"

NO_VECTORIZATION = {"cpp.simdlen": 1}  # no vector ISA has width 1: every C++ kernel is scalar
# Scalar C++ with no ISA probing at all: a GPU repro's CPU code path (blame's first question there).
# The vector path first asks which ISAs build and load, eleven checks that each start a Python
# importing torch on torch 2.11-2.12 (tens of seconds in a fresh process).
SCALAR_CPP = {"cpp.vec_isa_ok": False}
NO_SCHEDULER_FUSION = {"max_fusion_size": 1}


def asks_vec_isa(config: dict) -> bool:
    """An experiment that turns the ISA probing off (SCALAR_CPP): Inductor reads the flag once,
    when a process first lists its vector ISAs, and keeps that list for good."""
    return "cpp.vec_isa_ok" in config


def forget_vec_isa() -> None:
    """Forget the vector ISAs this process listed (and each ISA's cached check), so that the
    next C++ compile lists them again under the config it runs with. What it lists then is kept
    for good: the process must not compile for anyone else afterwards (a worker retires)."""
    from torch._inductor import cpu_vec_isa

    for value in vars(cpu_vec_isa).values():
        owners = [value] if callable(value) and not isinstance(value, type) else \
            list(vars(value).values()) if isinstance(value, type) and issubclass(value, cpu_vec_isa.VecISA) else []
        for owner in owners:
            if hasattr(owner, "cache_clear"):
                owner.cache_clear()

# Config flips worth trying on any Inductor failure (value to set). CompilerBisector's own
# ConfigChange list is added when the installed torch has one.
CONFIG_FLIPS = {
    "fallback_random": True,
    "emulate_precision_casts": True,
    "layout_optimization": False,
    "comprehensive_padding": False,
    "shape_padding": False,
    "pattern_matcher": False,
    "cpp.enable_loop_tail_vec": False,
    "cpp.threads": 1,
}
TRITON_FLIPS = {"triton.persistent_reductions": False, "triton.cudagraphs": False}
FUNCTORCH_PREFIX = "functorch."  # config keys for torch._functorch.config, e.g. functorch.cse


class Unavailable(Exception):
    """This torch has no hook for the experiment (an internal moved or was renamed)."""


@dataclass(frozen=True)
class Experiment:
    """One compile with some part of the compiler switched; plain data, sent to workers as JSON."""

    name: str
    config: dict = field(default_factory=dict)  # Inductor config (dotted keys); functorch.* keys too
    disable: dict = field(default_factory=dict)  # subsystem -> application names to skip, or ALL
    apart: tuple | str = ()  # fx node names (of the graph Inductor lowers) given their own kernels, or ALL
    device: str | None = None  # run on this device instead of the repro's
    record: bool = False  # report what the compiler applied (decompositions, passes, lowerings, nodes)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["apart"] = self.apart if isinstance(self.apart, str) else list(self.apart)
        d["disable"] = {k: v if isinstance(v, str) else sorted(v) for k, v in self.disable.items()}
        return d

    @staticmethod
    def from_dict(d: dict) -> "Experiment":
        apart = d.get("apart") or ()
        return Experiment(d["name"], dict(d.get("config") or {}), dict(d.get("disable") or {}),
                          apart if isinstance(apart, str) else tuple(apart), d.get("device"), bool(d.get("record")))

    def describe(self) -> dict:
        """What was switched, for the report (no name, no bookkeeping)."""
        return {k: v for k, v in self.to_dict().items() if k not in ("name", "record") and v}


@dataclass
class Record:
    """What the compiler applied during one compile, in order."""

    calls: dict = field(default_factory=dict)  # subsystem -> names of its applications
    nodes: dict = field(default_factory=dict)  # lowered fx node name -> {"target": ..., "users": [...]}

    def add_call(self, subsystem: str, name: str) -> None:
        self.calls.setdefault(subsystem, []).append(name)

    def add_node(self, name: str, info: dict) -> None:
        self.nodes[name] = info


def config_defaults() -> dict:
    """Inductor's config as it is now (take it before a repro changes it)."""
    import torch._inductor.config as inductor_config

    return dict(inductor_config.get_config_copy())


def known_flips(device: str) -> dict:
    """Config flips that exist in this torch and change something: {key: value to set}."""
    current = config_defaults()
    flips = {**bisector_config_changes(), **CONFIG_FLIPS, **(TRITON_FLIPS if device != "cpu" else {})}
    return {k: v for k, v in flips.items() if k in current and current[k] != v}


def bisector_config_changes() -> dict:
    """CompilerBisector's ConfigChange subsystems for Inductor (fallback_random, ...), if any."""
    try:
        from torch._inductor.compiler_bisector import BACKENDS, ConfigChange
    except ImportError:
        return {}
    return {s.config_field: s.config_value for s in BACKENDS.get("inductor", [])
            if isinstance(s, ConfigChange) and s.config_name == "inductor"}


@contextlib.contextmanager
def applied(experiment: Experiment, record: Record | None = None) -> Iterator[dict]:
    """Switch what `experiment` names for the block; yields the Inductor config to patch
    (the caller's compile patches it, after its own settings)."""
    functorch = {k[len(FUNCTORCH_PREFIX):]: v for k, v in experiment.config.items() if k.startswith(FUNCTORCH_PREFIX)}
    inductor = {k: v for k, v in experiment.config.items() if not k.startswith(FUNCTORCH_PREFIX)}
    if experiment.apart == ALL:
        inductor = {**NO_SCHEDULER_FUSION, **inductor}
    with contextlib.ExitStack() as stack:
        if functorch:
            import torch._functorch.config as functorch_config

            stack.enter_context(functorch_config.patch(functorch))
        if experiment.disable or record is not None:
            stack.enter_context(subsystems_disabled(experiment.disable, record))
        if experiment.apart or record is not None:
            stack.enter_context(kept_apart(experiment.apart, record))
        yield inductor


@contextlib.contextmanager
def subsystems_disabled(disable: dict, record: Record | None = None) -> Iterator[None]:
    """Skip the named applications of compiler subsystems (ALL: every one), recording all calls.

    Replaces CompilerBisector.disable_subsystem, the hook Inductor asks before each
    decomposition, graph pass and lowering; skipping a lowering falls the node back to ATen.
    """
    try:
        from torch._inductor.compiler_bisector import CompilerBisector
    except ImportError as exc:
        raise Unavailable(f"torch {torch.__version__} has no CompilerBisector") from exc
    original = CompilerBisector.__dict__.get("disable_subsystem")
    if original is None:
        raise Unavailable(f"torch {torch.__version__}: CompilerBisector has no disable_subsystem")

    def disable_subsystem(cls, backend, subsystem, debug_info=None):
        name = application_name(debug_info)
        if record is not None:
            record.add_call(subsystem, name)
        names = disable.get(subsystem)
        return names is not None and (names == ALL or name in names)

    CompilerBisector.disable_subsystem = classmethod(disable_subsystem)
    try:
        yield
    finally:
        CompilerBisector.disable_subsystem = original


def application_name(debug_info) -> str:
    """What Inductor says it is applying: an op (`aten.gelu.default`), a pass name, a node name."""
    if debug_info is None:
        return ""
    try:
        text = str(debug_info())
    except Exception:  # a debug string is never worth a failed compile
        return "?"
    # torch 2.13 reprs an op as <OpOverload(op='aten.gelu', overload='default')>; older ones as aten.gelu.default
    op = re.fullmatch(r"<OpOverload\(op='([^']+)', overload='([^']+)'\)>", text)
    return f"{op.group(1)}.{op.group(2)}" if op else text


@contextlib.contextmanager
def kept_apart(names, record: Record | None = None) -> Iterator[None]:
    """Give the fx nodes `names` (ALL: every node) kernels of their own: their results are
    realized as buffers right after lowering, and the scheduler fuses no kernel computing them.
    With `record`, note each lowered node's target and users."""
    try:
        from torch._inductor import ir
        from torch._inductor.graph import GraphLowering
        from torch._inductor.scheduler import Scheduler
    except ImportError as exc:
        raise Unavailable(f"torch {torch.__version__}: no GraphLowering/Scheduler to patch") from exc
    run_node, can_fuse = GraphLowering.__dict__.get("run_node"), Scheduler.__dict__.get("can_fuse")
    if run_node is None or can_fuse is None or not hasattr(ir, "TensorBox"):
        raise Unavailable(f"torch {torch.__version__}: GraphLowering.run_node or Scheduler.can_fuse moved")

    def chosen(name: str) -> bool:
        return names == ALL or name in names

    def patched_run_node(self, n):
        result = run_node(self, n)
        if n.op == "call_function":
            if record is not None:
                record.add_node(n.name, {"target": str(n.target),
                                         "users": [u.name for u in n.users if u.op == "call_function"]})
            if names and chosen(n.name) and isinstance(result, ir.TensorBox):
                result.realize()
        return result

    def patched_can_fuse(self, node1, node2, *args, **kwargs):
        if names and any(chosen(o) for o in origin_names(node1) | origin_names(node2)):
            return False
        return can_fuse(self, node1, node2, *args, **kwargs)

    GraphLowering.run_node = patched_run_node
    Scheduler.can_fuse = patched_can_fuse
    try:
        yield
    finally:
        GraphLowering.run_node = run_node
        Scheduler.can_fuse = can_fuse


def origin_names(snode) -> set[str]:
    """Names of the fx nodes a scheduler node (or fused group) computes."""
    members = snode.get_nodes() if hasattr(snode, "get_nodes") else [snode]
    return {getattr(o, "name", "") for m in members for o in (getattr(getattr(m, "node", None), "origins", None) or ())}
