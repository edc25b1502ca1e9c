"""From a program that fails as a whole to a short repro.py: instrument, reduce, write, verify.

Used when no single graph shows the failure: Dynamo's own mistakes (a wrong constant folded
while tracing, a crash while tracing), and failures that need the whole program. The repro
is the reduced program itself, judging itself (minifier.program.instrument): bugs planted
through compiler.inject are written inline in place of the program's own planting lines, so
repro.py needs only torch. It is verified in a fresh interpreter from another folder.
"""
from __future__ import annotations

import ast
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from compiler import inject
from compiler.judging import Judging
from compiler.launch_form import Launch, module_file
from minifier.program.instrument import RunResult, prologue_of, instrument, program_lines, project_statements, render, run_program
from minifier.program.layers import Layer
from minifier.program.one_rank import as_one_rank
from minifier.program.source_reduce import Oracle, reduce_program
from minifier.start.launch import Options

ROOT = Path(__file__).resolve().parents[2]


def minify_program(script: Launch | Path, opts: Options, out: Path, work: Path, layer: Layer, injections: list[dict],
                   zygote=None, say: Callable[[str], None] = lambda s: None) -> dict:
    """Reduce the program (a script's path, or how it is launched) at `layer`'s backend; write
    out/repro.py; the result for report.json. From `opts`: the timeout, the bugs planted with
    --inject (each candidate plants them itself: it runs without minify), the judging (--ignore)."""
    timeout, specs, judging = opts.timeout, opts.injections, opts.judging
    folder = work / "program"
    folder.mkdir(parents=True, exist_ok=True)
    one_rank = isinstance(script, Launch) and bool(script.torchrun)  # minify torchrun: run alone, a world of one
    source, script = program_source(script)
    tree = instrument(source, layer.backend)
    own_path(tree, script)
    planting = "from compiler.inject import apply, parse_spec\n" + "".join(f"apply(parse_spec({s!r}))\n" for s in specs)
    tree.body[:0] = ast.parse(planting).body if specs else []
    if one_rank:
        as_one_rank(tree)
    mode, first = first_failure(tree, folder, script.parent, timeout, zygote, judging, plain_first=one_rank)
    if first is None:
        return {"status": "not_checkable", "message": "neither does a compiled call differ from eager on copies of "
                "its inputs, nor does the program fail compiled and not eager, when rerun on its own"}
    say(f"reducing the program ({program_lines(tree)} lines) with {layer.backend or 'its own backend'}: {first.line}")
    oracle = Oracle(folder, script.parent, first.signature_in(mode), timeout, [str(ROOT)], zygote, mode=mode, judging=judging,
                    pinned=[ast.dump(s) for s in project_statements(tree)])
    reduction = reduce_program(tree, oracle, say=say)
    repro = out / "repro.py"
    repro.write_text(standalone(reduction.tree, injections, mode, judging))
    verified, why = verify(repro, oracle.signature, mode, timeout)
    return {"status": "reduced", "signature": oracle.signature, "message": first.line, "oracle": mode,
            "repro": str(repro), "verified": verified, "verified_why": why,
            "lines_before": reduction.lines_before, "lines_after": reduction.lines_after, "runs": reduction.runs,
            "seconds": reduction.seconds, "passes": reduction.passes, "complete": reduction.complete,
            "layer": asdict(layer)}


def own_path(tree: ast.Module, script: Path) -> None:
    """`__file__ = '/path/to/script.py'` at the top when the program reads its own path (its
    data files beside it): candidates run from the work folder and the repro from anywhere."""
    if not any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree)):
        return
    at = 0
    while at < len(tree.body) and (isinstance(tree.body[at], ast.ImportFrom) and tree.body[at].module == "__future__"
                                   or at == 0 and isinstance(tree.body[0], ast.Expr)
                                   and isinstance(tree.body[0].value, ast.Constant)):
        at += 1
    tree.body[at:at] = ast.parse(f"__file__ = {str(script.resolve())!r}").body


def program_source(program: Launch | Path) -> tuple[str, Path]:
    """The program's text as a script, and its file. A module's file runs as a script; a test's
    file gets a call of the test at its end (a test runs only when called), `test_y()` or
    `TestC().test_y()`; a parametrized test or one with fixtures is called without them."""
    if isinstance(program, Path) or program.form == "script":
        path = Path(program if isinstance(program, Path) else program.target)
        return path.read_text(), path
    if program.form == "module":
        path = module_file(program.target, [program.cwd, *sys.path[1:]])
        if path is None:
            raise FileNotFoundError(f"no file for the module {program.target}")
        return path.read_text(), path
    path = program.test_file
    names = [n.split("[", 1)[0] for n in program.target.split("::")[1:]]
    call = "().".join(names) + "()" if names else ""
    return path.read_text().rstrip("\n") + (f"\n\n\n{call}\n" if call else "\n"), path


def first_failure(tree: ast.Module, folder: Path, cwd: Path, timeout: float, zygote,
                  judging: Judging = Judging(), plain_first: bool = False) -> tuple[str, RunResult | None]:
    """How the whole program shows its failure on its own: each compiled call differing from
    eager on copies of its inputs (`check`), or else the program failing compiled where its
    eager control run does not (`plain`: a dropped side effect leaves equal outputs).
    `plain_first`: `plain` tried first (a job's program: the check's eager call on deep copies
    of DTensor inputs makes the compile fail otherwise than in the job)."""
    if plain_first and (found := _plain_failure(tree, folder, cwd, timeout, zygote)) is not None:
        return "plain", found
    (folder / "instrumented.py").write_text(render(tree, judging=judging))
    first = run_program(folder / "instrumented.py", cwd, timeout, [str(ROOT)], zygote)
    if first.signature is not None:
        return "check", first
    return "plain", None if plain_first else _plain_failure(tree, folder, cwd, timeout, zygote)


def _plain_failure(tree: ast.Module, folder: Path, cwd: Path, timeout: float, zygote) -> RunResult | None:
    """The program run as it is, failing compiled where its eager control run does not."""
    (folder / "plain.py").write_text(render(tree, "plain"))
    (folder / "plain_eager.py").write_text(render(tree, "eager"))
    plain = run_program(folder / "plain.py", cwd, timeout, [str(ROOT)], zygote)
    control = run_program(folder / "plain_eager.py", cwd, timeout, [str(ROOT)], zygote)
    return plain if plain.signature_in("plain") and control.passed else None


def standalone(tree: ast.Module, injections: list[dict], mode: str = "check", judging: Judging = Judging()) -> str:
    """The repro's text: the program without the statements that plant its bug through this
    project (project_statements), and the planted bugs' own code in their place. In `plain`
    mode the program calls torch.compile itself again, and its own failure is the check."""
    tree = ast.parse(ast.unparse(tree))
    ours = project_statements(tree)
    tree.body = [s for s in tree.body if not any(s is o for o in ours)]
    planted = inject.injection_source([inject.Injection.from_dict(d) for d in injections]) if injections else ""
    head = "import torch\n" + (f"\n{planted}\n" if planted else "")
    if mode == "plain":
        return head + "\n" + ast.unparse(ast.fix_missing_locations(UseTorchCompile().visit(tree))) + "\n"
    return render(tree, judging=judging).replace("import torch\n", head, 1)


class UseTorchCompile(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name):
        if node.id == "compiled_checked":
            return ast.copy_location(ast.Attribute(ast.Name("torch", ast.Load()), "compile", ast.Load()), node)
        return node


def verify(repro: Path, signature: str, mode: str, timeout: float) -> tuple[bool, str]:
    """Whether repro.py is verified, and why: in a fresh interpreter started from another
    folder it fails with `signature`, and (the control) it passes with TORCHDYNAMO_DISABLE=1.
    One that fails without the compiler too shows no compiler bug."""
    with tempfile.TemporaryDirectory(prefix="minify-verify-") as elsewhere:
        compiled = run_program(repro, Path(elsewhere), timeout)
        if compiled.signature_in(mode) != signature:
            return False, f"does not reproduce: it ended with {compiled.signature_in(mode) or 'exit status 0'}"
        control = run_program(repro, Path(elsewhere), timeout, control=True)
    if not control.passed:
        return False, f"fails without the compiler too (TORCHDYNAMO_DISABLE=1): {control.line or control.code}"
    return True, "fails compiled as the signature says, and passes with TORCHDYNAMO_DISABLE=1"


def plain_program(repro: str) -> str:
    """The reduced program as its author would write it, for the issue: repro.py without its
    generic checker (`compiled_checked`, deep copies, a tolerance table), `torch.compile` again."""
    try:
        tree = ast.parse(repro)
    except SyntaxError:
        return repro
    for judging in (Judging(), Judging(ignore=("signed_zero",))):
        prologue = [ast.dump(s) for s in ast.parse(prologue_of(judging)).body]
        if [ast.dump(s) for s in tree.body[:len(prologue)]] == prologue:
            tree.body = tree.body[len(prologue):]
            break
    return ast.unparse(ast.fix_missing_locations(UseTorchCompile().visit(tree))) + "\n"


def write_program_issue(out: Path, report: dict) -> Path:
    """issue.md in PyTorch's bug-report shape: a suggested title, what happens, the program inline
    with the error it gives, and collect_env's report under Versions."""
    import platform

    import torch

    from repro.versions import collect_env

    program, layer = report["program"], report.get("layer") or {}
    repro = Path(program["repro"]).read_text() if program.get("repro") else ""
    message = program.get("message") or program.get("signature") or ""
    rungs = ", ".join(f"{r['backend']}: {'fails' if r['fails'] else 'passes'}" for r in layer.get("runs", []))
    env = collect_env()
    lines = [f"Title: [{layer.get('backend') or 'torch.compile'}] {layer.get('name', 'the compiler')} makes the "
             f"program fail: {message.splitlines()[0][:80] if message else ''}".rstrip(": "), "",
             "### 🐛 Describe the bug", "",
             f"With `torch.compile(backend={layer.get('backend') or 'its own'!r})` this program fails where eager "
             f"runs it fine (backends tried: {rungs or 'none'}).", "",
             "```python", plain_program(repro).rstrip() if program.get("oracle") != "plain" else repro.rstrip(), "```",
             "", "Each `torch.compile` call above, compared with its function run eagerly on the same inputs "
             "(`torch.testing.assert_close(compiled(*args), fn(*args))`), gives:" if program.get("oracle") != "plain"
             else "Running it gives:", "```", message, "```", "",
             "(minify's `repro.py` is the same program with that check built in: it exits 1 while the bug is "
             "there.)", "",
             "### Versions", "", *(["```", env, "```"] if env else
                                   [f"torch {torch.__version__}, Python {platform.python_version()}, {platform.system()}"]),
             "", "_Written by minify._"]
    path = out / "issue.md"
    path.write_text("\n".join(lines) + "\n")
    return path


TEST = """\"\"\"Regression test written by minify: {signature}

{layer}. The reduced program below checks each torch.compile call against eager; it exits
with one line while the bug is there. This test fails until the bug is fixed.
\"\"\"
import subprocess
import sys

REPRO = {repro!r}


def test_{name}_compiled_program_matches_eager(tmp_path):
    path = tmp_path / "repro.py"
    path.write_text(REPRO)
    run = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (run.stderr.strip().splitlines() or ["(no output)"])[-1]
"""


def write_program_test(report: dict, dest: Path, name: str) -> Path:
    """A pytest file that runs the program repro in a fresh interpreter and passes once it is fixed."""
    program, layer = report["program"], report.get("layer") or {}
    dest.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() else "_" for c in name)
    path = dest / f"test_{safe}.py"
    path.write_text(TEST.format(signature=program["signature"], layer=f"Layer to blame: {layer.get('name')}",
                                repro=Path(program["repro"]).read_text(), name=safe))
    return path
