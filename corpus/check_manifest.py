"""Check that corpus cases fail the way manifest.json says, and pass once their bug is removed.

The known answers must not come from the tool they grade, so this uses no part of minify's
capture, only plain Inductor and the shared oracle (`compiler.oracle.check`). One process
imports torch once and checks many cases:

1. load the script without running `main()` (its top level plants the bug);
2. run `main()` with `torch.compile` swapped for a recorder: each Dynamo graph is counted,
   compiled with Inductor (the script's mode/options/dynamic), and at its first call checked
   against eager on copies of the same inputs;
3. replay the first failing graph through `aot_eager` and `aot_eager_decomp_partition`: a
   decomposition bug must fail from the second on, an Inductor bug at neither;
4. remove the bug (injections and Inductor config) and run `main()` again: nothing may fail.

A case whose bug kills the process (kind `crash`, or a CUDA device-side assert, which spoils
the process's CUDA context) runs step 2 in a child process that prints each graph before
calling it. Cases tagged `backward` fail only in a backward graph, which no forward check
sees: no forward graph may fail, and `main()` must return values (gradients) that differ
from an eager run with the bug and match it without. CUDA cases are skipped without a GPU.

    PYTHONPATH=. python corpus/check_manifest.py [-k SUBSTR] [--cases a,b] [--device cpu|cuda] [--update]

`--update` writes the measured `graphs` and `fx_nodes` of checked cases back to manifest.json.

Foreign programs (`programs/manifest.json`, kind `none`: nothing may fail) run step 2 only: no
graph may fail and the number of Dynamo graphs must match; there is no bug to remove.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import runpy
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

from compiler import inject
from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
from compiler.oracle import check, clone_inputs, flatten
from manifest_answers import Checked, compare  # beside this script: its folder is sys.path[0]

CORPUS = Path(__file__).resolve().parent
MANIFEST = CORPUS / "manifest.json"
PROGRAMS = CORPUS / "programs" / "manifest.json"  # foreign programs: expected answer "nothing fails"
MARK = "@@corpus-check "  # lines the child prints about its graphs


@dataclass
class Graph:
    index: int
    nodes: int
    kind: str | None = None  # failure kind, None while it passes
    message: str = ""
    module: torch.fx.GraphModule | None = None  # eager copy and first-call inputs, for the stage replay
    inputs: list | None = None
    dynamic: bool | None = None


def load_manifest() -> list[dict]:
    """Planted-bug cases, then the programs (foreign ones, kind `none`, and planted program shapes)."""
    programs = json.loads(PROGRAMS.read_text()) if PROGRAMS.exists() else []
    return json.loads(MANIFEST.read_text()) + programs


def write_manifest(entries: list[dict]) -> None:
    """One entry a line: readable, and a new case is a one-line diff. Each entry goes back to its file:
    a script under programs/ (a foreign program, or a planted program shape) to programs/manifest.json."""
    in_programs = lambda e: e["script"].startswith("programs/")  # noqa: E731
    for path, wanted in ((MANIFEST, lambda e: not in_programs(e)), (PROGRAMS, in_programs)):
        chosen = [e for e in entries if wanted(e)]
        if chosen or path == MANIFEST:
            path.write_text("[\n" + ",\n".join("  " + json.dumps(e) for e in chosen) + "\n]\n")


class Recorder:
    """Stands in for torch.compile: Inductor for every graph, plus a first-call check against eager."""

    def __init__(self, announce: bool = False):
        self.graphs: list[Graph] = []
        self.announce = announce  # print each graph before calling it (child processes)

    def compile(self, model=None, *, backend="inductor", mode=None, options=None, dynamic=None, **kwargs):
        if model is None:
            return lambda m: self.compile(m, backend=backend, mode=mode, options=options, dynamic=dynamic, **kwargs)
        inner = torch._TorchCompileInductorWrapper(mode, options, dynamic) if backend == "inductor" else backend
        return ORIGINAL_COMPILE(model, backend=lambda gm, ex: self.backend(gm, ex, inner, dynamic), dynamic=dynamic,
                                **kwargs)

    def backend(self, gm, example_inputs, inner, dynamic):
        graph = Graph(len(self.graphs), len(gm.graph.nodes), dynamic=dynamic)
        self.graphs.append(graph)
        self._say(f"graph {graph.index} nodes {graph.nodes}")
        eager = torch.fx.GraphModule(gm, gm.graph)
        try:
            compiled = inner(gm, example_inputs)
        except (torch._dynamo.exc.RestartAnalysis, torch._dynamo.exc.SkipFrame):
            self.graphs.pop()  # Dynamo traces again: not a graph of its own
            self._say(f"graph {graph.index} dropped")
            raise
        except Exception as exc:
            graph.kind, graph.message = "compile_error", f"{type(exc).__name__}: {exc}"[:300]
            self._say(f"graph {graph.index} compile_error")
            return eager.forward

        def call(*args):
            if graph.module is None:
                graph.module, graph.inputs = eager, clone_inputs(list(args))
                self._say(f"graph {graph.index} calling")
                outcome = check(eager, list(args), compiled, stage="inductor")
                if outcome.status == "fail":
                    graph.kind, graph.message = outcome.kind, outcome.message
                    self._say(f"graph {graph.index} {outcome.kind}")
            if graph.kind and graph.kind != "accuracy":
                return eager(*args)
            return compiled(*args)

        return call

    def _say(self, text: str) -> None:
        if self.announce:
            print(MARK + text, flush=True)


ORIGINAL_COMPILE = torch.compile


def run_main(main, recorder: Recorder | None):
    """`main()` with torch.compile recording (or, with None, doing nothing: eager); (result, error)."""
    torch._dynamo.reset()
    torch.compile = recorder.compile if recorder else (lambda model=None, **kw: (lambda m: m) if model is None else model)
    try:
        return main(), None
    except Exception as exc:  # the script's own failure
        return None, f"{type(exc).__name__}: {exc}"[:300]
    finally:
        torch.compile = ORIGINAL_COMPILE


def deferred_compile(model=None, **kwargs):
    """Stands in for torch.compile while a script's top level runs (`@torch.compile def f`): the
    function is compiled at its first call by whatever torch.compile is then (a Recorder's, or
    plain eager in `run_main(main, None)`), once per stand-in, so the buggy and the clean run
    each record it."""
    if model is None:
        return lambda m: deferred_compile(m, **kwargs)
    compiled = {}

    def call(*args, **kw):
        current = torch.compile
        if current not in compiled:
            compiled[current] = current(model, **kwargs)
        return compiled[current](*args, **kw)

    return functools.wraps(model)(call)


def load_script(case: dict) -> dict:
    """The script's namespace, its top-level `@torch.compile` left to the run that calls it."""
    torch.compile = deferred_compile
    try:
        return runpy.run_path(str(CORPUS / case["script"]), run_name="corpus_case")
    finally:
        torch.compile = ORIGINAL_COMPILE


def differs(a, b) -> bool:
    fa, fb = flatten(a), flatten(b)
    if len(fa) != len(fb):
        return True
    for (_, x), (_, y) in zip(fa, fb):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            x, y = x.detach().cpu(), y.detach().cpu()
            same = torch.allclose(x.double(), y.double(), rtol=1e-3, atol=1e-4) if x.is_floating_point() \
                else torch.equal(x, y)
            if not same:
                return True
        elif x != y:
            return True
    return False


def stage_answers(graph: Graph) -> dict:
    """The failing graph replayed through the two stages before Inductor."""
    spec = CompileSpec(dynamic=graph.dynamic)
    answers = {}
    for stage in ("aot_eager", "aot_eager_decomp_partition"):
        with fresh_compile_state(spec):
            outcome = check(graph.module, graph.inputs, compile_for_stage(graph.module, stage, spec), stage=stage)
        answers[stage] = outcome.status
    return answers


def child_graphs(case: dict) -> tuple[list[Graph], int]:
    """Run the buggy pass in a child process (its crash kills only it); graphs from its marks, exit code."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CORPUS.parent), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", case["name"]], env=env,
                          capture_output=True, text=True, timeout=1800, cwd=CORPUS)
    graphs: list[Graph] = []
    calling = None
    for line in proc.stdout.splitlines():
        if not line.startswith(MARK):
            continue
        words = line[len(MARK):].split()
        index = int(words[1])
        if words[2] == "nodes":
            graphs.append(Graph(index, int(words[3])))
        elif words[2] == "dropped":
            graphs.pop()
        elif words[2] == "calling":
            calling = index
        else:
            graphs[index].kind = words[2]
    if proc.returncode != 0 and calling is not None and graphs[calling].kind is None:
        graphs[calling].kind = "crash" if proc.returncode < 0 else "runtime_error"
        graphs[calling].message = f"child exited with {proc.returncode}"
    return graphs, proc.returncode


def check_case(case: dict) -> Checked:
    start = time.perf_counter()
    out = Checked(case["name"])
    config_before = torch._inductor.config.get_config_copy()
    backward = "backward" in case.get("tags", [])
    try:
        if case["kind"] == "none":  # a foreign program: one recorded run, nothing may fail
            recorder = Recorder()
            torch._dynamo.reset()
            torch.compile = recorder.compile  # its top level may compile too (`@torch.compile def ...`)
            try:
                main = runpy.run_path(str(CORPUS / case["script"]), run_name="corpus_case")["main"]
            finally:
                torch.compile = ORIGINAL_COMPILE
            _, error = run_main(main, recorder)
            out.graphs = len(recorder.graphs)
            out.failing = [g.index for g in recorder.graphs if g.kind]
            failing = [g for g in recorder.graphs if g.kind]
            if failing:
                out.kind, out.message = failing[0].kind, failing[0].message
            if error:
                out.problems.append(f"the program fails: {error}")
            out.problems += compare(case, out)
            out.seconds = time.perf_counter() - start
            return out
        namespace = load_script(case)
        main = namespace["main"]
        if case["kind"] == "crash" or (case["device"] == "cuda" and case["kind"] == "runtime_error"):
            graphs, _ = child_graphs(case)
        else:
            recorder = Recorder()
            result, _ = run_main(main, recorder)
            graphs = recorder.graphs
            if backward:
                out.backward_differs = differs(result, run_main(main, None)[0])
        out.graphs = len(graphs)
        failing = [g for g in graphs if g.kind]
        out.failing = [g.index for g in failing]
        if failing:
            out.kind, out.message = failing[0].kind, failing[0].message
            if failing[0].module is not None:
                out.stages = stage_answers(failing[0])
        out.fx_nodes = next((g.nodes for g in graphs if g.index == case["graph_index"]), None)
        remove_bugs(config_before)
        clean = Recorder()
        result, error = run_main(main, clean)
        out.clean_failing = [g.index for g in clean.graphs if g.kind]
        if error:
            out.problems.append(f"without the bug the script fails: {error}")
        if backward:
            out.clean_backward_differs = differs(result, run_main(main, None)[0])
    except Exception:
        out.problems.append("checker error: " + traceback.format_exc()[-1500:])
    finally:
        remove_bugs(config_before)
    out.problems += compare(case, out)
    out.seconds = time.perf_counter() - start
    return out


def remove_bugs(config_before: dict) -> None:
    for applied in list(inject.ACTIVE):
        inject.remove(applied)
    torch._inductor.config.load_config(config_before)
    torch._dynamo.reset()


def select(cases: list[dict], names: str | None, substring: str | None, device: str | None) -> list[dict]:
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        unknown = set(wanted) - {c["name"] for c in cases}
        if unknown:
            raise SystemExit(f"unknown case(s): {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c["name"] in wanted]
    if substring:
        cases = [c for c in cases if substring in c["name"]]
    if device:
        cases = [c for c in cases if c["device"] == device]
    return cases


def child(name: str) -> int:
    """The buggy pass of one case, announcing each graph (the parent reads the marks)."""
    case = next(c for c in load_manifest() if c["name"] == name)
    namespace = load_script(case)
    _, error = run_main(namespace["main"], Recorder(announce=True))
    return 1 if error else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", help="comma-separated case names")
    parser.add_argument("-k", dest="substring", help="only cases whose name contains this")
    parser.add_argument("--device", choices=("cpu", "cuda"))
    parser.add_argument("--update", action="store_true", help="write measured graphs/fx_nodes to the manifest")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    from compiler import settings

    settings.apply()  # caches off, kernels compiled in-process: one case cannot spoil the next
    ns = parser.parse_args(argv)
    if ns.child:
        return child(ns.child)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    results = []
    for case in select(load_manifest(), ns.cases, ns.substring, ns.device):
        if case["device"] == "cuda" and not torch.cuda.is_available():
            console.print(f"[yellow]skip[/yellow] {case['name']}: needs CUDA")
            continue
        got = check_case(case)
        results.append((case, got))
        status = "[green]ok[/green]" if not got.problems else "[red]MISMATCH[/red] " + "; ".join(got.problems)
        console.print(f"{case['name']}: {got.graphs} graph(s), failing {got.failing} ({got.kind}), "
                      f"{got.fx_nodes} nodes, stages {got.stages or '-'}, {got.seconds:.0f}s: {status}",
                      highlight=False)
    table = Table(title="corpus check")
    for col in ("case", "kind", "graphs", "failing", "fx_nodes", "stage", "clean", "verdict"):
        table.add_column(col)
    for case, got in results:
        table.add_row(case["name"], f"{got.kind}", f"{got.graphs}", f"{got.failing}", f"{got.fx_nodes}",
                      f"{case.get('stage')}", "pass" if not got.clean_failing else "FAIL",
                      "ok" if not got.problems else "[red]mismatch[/red]")
    console.print(table)
    if ns.update and results:
        entries = load_manifest()  # re-read: others may have added cases meanwhile
        measured = {case["name"]: got for case, got in results if got.graphs is not None}
        for entry in entries:
            if entry["name"] in measured:
                entry["graphs"] = measured[entry["name"]].graphs
                if entry["kind"] != "none":
                    entry["fx_nodes"] = measured[entry["name"]].fx_nodes
        write_manifest(entries)
    return 1 if any(got.problems for _, got in results) else 0


if __name__ == "__main__":
    sys.exit(main())
