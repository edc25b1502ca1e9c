"""The worker's half of minifier.localize.divergence: one job, on one warm worker, that finds where an
accuracy failure starts while building as few new kernels as it can.

Inductor's code for the graph is generated (not built) to learn which kernel computes which
node; the values those kernels store are judged first (their kernels come from the kernel
cache), then the inside of the first wrong kernel, then, only if neither shows the failure,
every intermediate at once. The answer names nodes as the pipeline does: it sends its node
names in graph order, and the worker's re-traced graph is renamed to match.
"""
from __future__ import annotations

import contextlib

import torch.fx as fx


def run_divergence(job: dict, case_values) -> dict:
    from compiler import inject
    from compiler.graph_code import module_from_source, module_source, trace_module
    from compiler.kernels import dynamo_op_names, generated_code
    from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state, kernel_build_threads
    from minifier.localize.nodes import exposed_nodes, inside_of, judged, roots, stored_nodes
    from minifier.reduce.graph_edit import input_ref, placeholders, rebuild
    from compiler.oracle import check
    from minifier.workers.protocol import resolve_inputs
    from compiler.context import graph_modes

    spec = CompileSpec.from_dict(job["spec"])
    values = case_values.get(job["case_dir"])
    injections = [inject.Injection.from_dict(d) for d in job.get("injections", [])]
    tolerance = dict(atol=job.get("atol"), rtol=job.get("rtol"), strict=job.get("strict", False),
                     ignore=tuple(job.get("ignore", ())))
    model = module_from_source(job["source"])
    gm = renamed(trace_module(model), job["node_names"], job["inputs"])
    if gm is None:
        return {"status": "invalid", "kind": "worker_error", "message": "the re-traced graph has other nodes"}
    compiles = 0

    @contextlib.contextmanager
    def compiling(inputs, threads: int = 1):
        with inject.injected(*injections), fresh_compile_state(spec), kernel_build_threads(threads), \
                graph_modes(job.get("context") or {}, spec.grad_enabled, inputs):
            yield

    def judge(candidate: fx.GraphModule, outputs: list[str]) -> dict | None:
        nonlocal compiles
        compiles += 1
        model = module_from_source(module_source(candidate))
        inputs = resolve_inputs(values, [input_ref(p) for p in placeholders(candidate)])
        with compiling(inputs, job.get("kernel_threads", 1)):
            outcome = check(model, inputs, compile_for_stage(model, "inductor", spec), stage="inductor", **tolerance)
        return judged(outcome.__dict__, outputs)

    def answer(found: list[str], metrics: dict, how: str) -> dict:
        return {"status": "ok", "roots": found, "metrics": metrics, "observed": list(metrics), "how": how,
                "compiles": compiles}

    exposed = exposed_nodes(gm, values)
    inputs = resolve_inputs(values, job["inputs"])
    with compiling(inputs):
        _, kernels = generated_code(model, inputs, spec)
    compiles += 1  # code generated, nothing built
    calls = [n.name for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
    ours = dict(zip(dynamo_op_names(gm), calls))
    node_kernels: dict[str, set] = {}
    for kernel in kernels:
        for name in kernel.nodes:
            if name in ours:
                node_kernels.setdefault(ours[name], set()).add(kernel.name)
    stored = stored_nodes(gm, exposed, node_kernels, {k.name for k in kernels if k.in_place})
    metrics = judge(rebuild(gm, outputs=stored), stored) if stored else None
    found = roots(gm, metrics) if metrics else []
    if found:
        inner = inside_of(gm, found, metrics, exposed, values)
        if inner is None:
            return answer(found, metrics, "stored")
        inside = judge(*inner)
        refined = roots(inner[0], inside) if inside else []
        if refined:
            return answer(refined, {**metrics, **inside}, "stored")
    every = judge(rebuild(gm, outputs=exposed), exposed)
    return answer(roots(gm, every) if every else [], every or {}, "every")


def renamed(traced: fx.GraphModule, names: list[str], refs: list) -> fx.GraphModule | None:
    """`traced` with its nodes named as the pipeline names them (`names`: every node but the
    inputs and the output, in graph order) and its inputs fed by `refs`; None if the node
    counts differ."""
    from minifier.reduce.graph_edit import new_module

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

