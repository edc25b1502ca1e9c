"""The worker's half of minifier.localize.divergence: one job, on one warm worker, that finds where an
accuracy failure starts while building as few new kernels as it can.

Inductor's code for the graph is generated (not built) to learn which kernel computes which
node; the values those kernels store are judged first (their kernels come from the kernel
cache), then the inside of the first wrong kernel (its extern inputs alone where that is all
it reads unobserved), then, only if neither shows the failure,
every intermediate at once. The answer names nodes as the pipeline does: it sends its node
names in graph order, and the worker's re-traced graph is renamed to match.
"""
from __future__ import annotations

import contextlib

import torch.fx as fx

from compiler import inject
from compiler.context import graph_modes
from compiler.graph_code import module_from_source, module_source, trace_module
from compiler.kernels import Kernel, generated_code
from compiler.oracle import judged_check
from compiler.cudagraphs import prime
from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state, kernel_build_threads
from minifier.graph.nodes import (diverges, exposed_nodes, inside_of, judged, judged_in_chunks, leading_in,
                                     node_kernel_map, observed, region_names, roots, stored_nodes)
from minifier.graph.edit import input_ref, new_module, placeholders, rebuild
from minifier.workers.job import Job
from minifier.workers.protocol import resolve_inputs
from repro.value_store import memory_budget


class DivergenceJob:
    """One divergence question on this worker: the graph named as the pipeline names it, its
    recorded values, how to compile it, and how many compiles it has cost so far."""

    def __init__(self, job: Job, case_values):
        self.job = job
        self.spec = CompileSpec.from_dict(job.spec)
        self.values = case_values.get(job.case_dir)
        self.injections = [inject.Injection.from_dict(d) for d in job.injections]
        self.model = module_from_source(job.source)
        self.gm = renamed(trace_module(self.model), job.node_names, job.inputs)
        self.compiles = 0
        self.generated: dict = {}  # Inductor's code and kernels for the whole graph, as a kernels job answers
        self.node_kernels: dict[str, set] = {}  # node -> the kernels that compute it (kernels_by_node)
        self.extern: set[str] = set()  # the names of the extern kernels among them

    @contextlib.contextmanager
    def compiling(self, inputs, threads: int = 1):
        with inject.injected(*self.injections), fresh_compile_state(self.spec), kernel_build_threads(threads), \
                graph_modes(self.job.context or {}, self.spec.grad_enabled, inputs):
            yield

    def judge(self, candidate: fx.GraphModule, outputs: list[str]) -> dict | None:
        """Compile and run `candidate`; the oracle's metrics of `outputs`."""
        return judged(self.run(candidate), outputs)

    def judge_exposed(self, names: list[str]) -> dict | None:
        """The oracle's metrics with `names` exposed, a memory budget's worth per compile."""
        return judged_in_chunks(lambda chunk: self.run(rebuild(self.gm, outputs=chunk)), names, self.values,
                                memory_budget())

    def stored_metrics(self, stored: list[str]) -> dict | None:
        """judge_exposed(stored), taken from the metrics the graph's own check gave its outputs
        when it judged every stored value (a piece returns them: minifier.localize.pieces)."""
        known = self.job.known_metrics or {}
        if not all(name in known for name in stored):
            return self.judge_exposed(stored) if stored else None
        metrics = {name: known[name] for name in stored}
        return metrics if any(diverges(m) for m in metrics.values()) else None

    def run(self, candidate: fx.GraphModule) -> dict:
        self.compiles += 1
        model = module_from_source(module_source(candidate))
        inputs = resolve_inputs(self.values, [input_ref(p) for p in placeholders(candidate)])
        with self.compiling(inputs, self.job.kernel_threads):
            compiled = compile_for_stage(model, "inductor", self.spec)
            prime(compiled, inputs, self.job.calls_before)  # CUDA graphs: as late as in the script
            outcome = judged_check(model, inputs, compiled, "inductor", self.job.judging)
        return outcome.__dict__

    def answer(self, found: list[str], metrics: dict, how: str) -> dict:
        return {"status": "ok", "roots": found, "metrics": metrics, "observed": list(metrics), "how": how,
                "compiles": self.compiles, **self.generated}

    def settled_by_extern(self, found: list[str], metrics: dict, exposed: list[str]) -> dict | None:
        """The answer, when what the roots read unobserved is computed by extern kernels
        alone (a Linear's addmm that the activation's kernel then overwrites in place) or by
        none (views): those nodes are judged alone, an ATen call and no kernel to build;
        where they agree, the roots are the stored ones, judged in the graph's own kernels.
        None when a generated kernel computes any of them (the inside must be compiled)."""
        before = region_names(self.gm, found, metrics) - set(found)
        if any(self.node_kernels.get(name, set()) - self.extern for name in before):
            return None
        piece = leading_in(self.gm, found, metrics, exposed, self.values)
        if piece is None:
            return self.answer(found, metrics, "stored")
        seen = observed(self.run(piece[0]), piece[1])
        if seen is None:
            return None
        refined = roots(piece[0], seen) if any(diverges(m) for m in seen.values()) else found
        return self.answer(refined, {**metrics, **seen}, "stored")

    def kernels_by_node(self) -> tuple[dict[str, set], set[str]]:
        """Which kernels compute each node (Inductor's code generated, nothing built), and the
        kernels that write in place."""
        if self.job.known_kernels:  # a check of this graph recorded them as it compiled
            kernels = [Kernel(**k) for k in self.job.known_kernels]
            self.generated = {"kernels": list(self.job.known_kernels)}
        else:
            inputs = resolve_inputs(self.values, self.job.inputs)
            with self.compiling(inputs):
                code, kernels = generated_code(self.model, inputs, self.spec)
            self.compiles += 1  # code generated, nothing built
            # the same answer as a kernels job on this graph: localization takes it from here
            self.generated = {"code": code, "kernels": [k.to_dict() for k in kernels]}
        self.node_kernels, in_place, self.extern = node_kernel_map(self.gm, kernels)
        return self.node_kernels, in_place


def run_divergence(job: Job, case_values) -> dict:
    """Stored values first, then the inside of the first wrong kernel, then every intermediate."""
    d = DivergenceJob(job, case_values)
    gm = d.gm
    if gm is None:
        return {"status": "invalid", "kind": "worker_error", "message": "the re-traced graph has other nodes"}
    exposed = exposed_nodes(gm, d.values)
    stored = stored_nodes(gm, exposed, *d.kernels_by_node())
    metrics = d.stored_metrics(stored)
    found = roots(gm, metrics) if metrics else []
    if found:
        inner = inside_of(gm, found, metrics, exposed, d.values)
        if inner is None:
            return d.answer(found, metrics, "stored")
        settled = d.settled_by_extern(found, metrics, exposed)
        if settled is not None:
            return settled
        inside = d.judge(*inner)
        refined = roots(inner[0], inside) if inside else []
        if refined:
            return d.answer(refined, {**metrics, **inside}, "stored")
    every = d.judge_exposed(exposed)
    return d.answer(roots(gm, every) if every else [], every or {}, "every")


def renamed(traced: fx.GraphModule, names: list[str], refs: list) -> fx.GraphModule | None:
    """`traced` with its nodes named as the pipeline names them (`names`: every node but the
    inputs and the output, in graph order) and its inputs fed by `refs`; None if the node
    counts differ."""
    nodes = [n for n in traced.graph.nodes if n.op not in ("placeholder", "output")]
    inputs = [n for n in traced.graph.nodes if n.op == "placeholder"]
    if len(nodes) != len(names) or len(inputs) != len(refs):
        return None
    graph, env = fx.Graph(), {}
    named = dict(zip(nodes, names))
    for node in traced.graph.nodes:
        if node.op == "placeholder":
            env[node] = graph.node_copy(node)
            ref = refs[inputs.index(node)]
            env[node].meta["value"], transform = (ref, None) if isinstance(ref, str) else ref
            if transform:
                env[node].meta["transform"] = transform
        elif node.op == "output":
            graph.output(fx.map_arg(node.args[0], lambda n: env[n]))
        else:
            env[node] = graph.create_node(node.op, node.target, fx.map_arg(node.args, lambda n: env[n]),
                                          fx.map_arg(node.kwargs, lambda n: env[n]), name=named[node])
            env[node].meta = dict(node.meta)
    gm = new_module(graph, traced)
    gm.recompile()
    return gm

