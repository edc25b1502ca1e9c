"""Each distinct fuzzing failure as a small standalone script (`OUT/cases/<name>.py`, a
torch.compile'd function on its inputs, inline when small, else in `<name>.pt` beside it, with
any planted bug), handed to the normal pipeline,
which captures, reduces, writes `OUT/bug-k/repro.py`, verifies it in a fresh process and writes
a regression test into `OUT/tests/`."""
from __future__ import annotations

import re
from pathlib import Path

import torch

from minifier.fuzz.campaign import FuzzOptions, to_device
from minifier.fuzz.failures import Failure


CASE_TEMPLATE = '''"""Found by `minify fuzz` (seed {seed}, example {example}): {key}

{message}
Inputs: {inputs}
"""
from pathlib import Path

import torch
{plant}
INPUTS = Path(__file__).with_name({inputs_file!r})  # read only when an input is too big to inline


{make_inputs}

{function}

{main}

if __name__ == "__main__":
    main()
'''


FORWARD_MAIN = """def main():
    return torch.compile(program{compile_args})(*make_inputs())
"""

BACKWARD_MAIN = """{loss}

def main():
    inputs = [x.detach().requires_grad_() if x.is_floating_point() else x for x in make_inputs()]
    outputs = torch.compile(program{compile_args})(*inputs)
    weighted_loss(outputs).backward()  # the inputs' gradients are what compiled gets wrong
    return outputs, [x.grad for x in inputs if x.requires_grad]
"""


def main_source(failure: Failure) -> str:
    """The case's main(): the compiled call, and for a program checked through backward the
    backward pass from the loss the fuzzer checked (compiler.grads.weighted_loss, its source)."""
    import inspect

    from compiler.grads import weighted_loss

    compile_args = ", dynamic=True" if failure.program.dynamic else ""
    if not failure.program.backward:
        return FORWARD_MAIN.format(compile_args=compile_args)
    return BACKWARD_MAIN.format(loss=inspect.getsource(weighted_loss).rstrip(), compile_args=compile_args)


def case_name(index: int, failure: Failure) -> str:
    ops = "_".join(re.sub(r"\W+", "_", op.split(".")[-1]) for op in failure.suspects[:3])
    return f"fuzz_{index}_{ops}_{failure.kind}{'_grad' if failure.gradient else ''}"


def write_case(failure: Failure, folder: Path, name: str, opts: FuzzOptions) -> Path:
    """A standalone script that compiles the failing program on its saved inputs."""
    from repro.inputs import plan_inputs

    folder.mkdir(parents=True, exist_ok=True)
    program = failure.program
    inputs = [to_device(t, opts.device) for t in program.input_list()]
    plan = plan_inputs(inputs, list(program.inputs), f"{name}.pt", opts.device)  # small inputs inline
    if plan.saved:
        torch.save(plan.saved, folder / f"{name}.pt")
    plant = "".join(f"\nplant({spec!r})" for spec in opts.injections)
    plant = f"\nfrom compiler.inject import plant\n{plant}\n" if plant else ""
    script = folder / f"{name}.py"
    script.write_text(CASE_TEMPLATE.format(
        seed=opts.seed, example=failure.example, key=failure.key, message=failure.message.replace('"""', "'''"),
        inputs="; ".join(program.describe_inputs()), plant=plant, function=program.function_source(),
        inputs_file=f"{name}.pt", make_inputs=plan.source, main=main_source(failure)))
    return script


def reduce_failure(script: Path, out: Path, tests: Path, quiet: bool, console=None) -> dict:
    """Run the normal minify pipeline on a case script; the row fuzz.json keeps."""
    from minifier.report.console import ConsoleUI
    from minifier.run.pipeline import Options, UserError, run

    try:
        result = run(Options(script=script, out=out, emit_test=tests), ConsoleUI(console, quiet=quiet))
    except UserError as exc:
        return {"exit": exc.code, "error": str(exc), "verified": False}
    report = result.report
    program = report.get("program") or {}  # a failure of the whole program (Dynamo's, say): its repro
    if report.get("status") == "program":
        layer = (report.get("layer") or {}).get("name") or "the compiler"
        return {"exit": result.code, "repro": program.get("repro"), "verified": bool(program.get("verified")),
                "reduced_ops": None, "stage": "program", "repro_signature": program.get("signature"),
                "tests": report.get("tests", []), "blame": f"layer: {layer} (the whole program fails)",
                "error": None if result.code == 0 else report.get("status")}
    return {"exit": result.code, "repro": report.get("repro"), "verified": report.get("verified", False),
            "reduced_ops": report.get("ops"), "stage": report.get("stage"),
            "repro_signature": (report.get("failure") or {}).get("signature"), "tests": report.get("tests", []),
            "blame": blamed_part(report.get("blame")),
            "error": None if result.code == 0 else report.get("status")}


def blamed_part(findings: list[dict] | None) -> str:
    """The compiler part the blame search named (its first two findings), or ""."""
    return "; ".join(f"{f['what']}: {f['finding']}" for f in (findings or [])[:2])


def numerics_apart(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(findings, numerics): a failure the minifier's own run judged numerics (its exit 5: one
    graph alone, passing every check of the ladder, differing only as rounding does) is not a
    finding. The campaign's single check of a float16 program can fall just past a tolerance
    that the pipeline, with its fp64 evidence, sees as rounding; the pipeline's verdict wins."""
    from minifier.exit_codes import EXIT_NUMERICS

    return ([r for r in rows if r.get("exit") != EXIT_NUMERICS], [r for r in rows if r.get("exit") == EXIT_NUMERICS])


def mark_duplicates(rows: list[dict]) -> None:
    """Failures that reduce to the same ops with the same signature are one bug."""
    seen: dict[tuple, int] = {}
    for number, row in enumerate(rows, 1):
        if not row.get("verified") or not row.get("reduced_ops"):
            continue
        ident = (row.get("repro_signature"), tuple(row["reduced_ops"]))
        if ident in seen:
            row["duplicate_of"] = seen[ident]
        else:
            seen[ident] = number

