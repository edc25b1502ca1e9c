"""AOTInductor programs (issue 49): the "nothing compiled" control turns AOTInductor off too, a
failure in an AOTInductor package ends in a verified repro of its reduced exported graph (or,
where it cannot be reduced, a plain "not supported", exit 9), never in a false "the script
fails without torch.compile too", and an export that fails is the user's
(exit 2, the exporter's message). Real torch.export and real AOTInductor throughout; the
planted bugs are compiler.inject's, which reach Inductor's code under AOTInductor too.
"""
import json
import os
import textwrap
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, run_minify
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_OK, EXIT_UNSUPPORTED
from minifier.capture.process import Capture, run_capture
from minifier.program.instrument import run_program
from minifier.report.schema import off_schema
from repro.verify import run_control

# A repro-shaped program: exports, AOTInductor-compiles, loads and checks against eager. The
# planted lowering bug makes the compile raise at once (no C++ is built, so the test is quick).
AOTI_REPRO = textwrap.dedent('''
    import torch
    from compiler.inject import plant

    plant("lowering:exp:compile_error")

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.exp(x) + 1

    x = torch.randn(3, 4)
    ep = torch.export.export(M(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    if torch.allclose(package(x), M()(x)):
        print("NOT REPRODUCED: the package matches eager")
    else:
        print("REPRODUCED: the package differs from eager")
        raise SystemExit(1)
''')


@pytest.fixture
def aoti_repro(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    path = tmp_path / "repro.py"
    path.write_text(AOTI_REPRO)
    return path


def test_verification_control_turns_aoti_off(aoti_repro):
    """repro.py's control (nothing compiled) runs the package as its exported program, eagerly:
    the planted AOTInductor compile error is not seen there, so the repro passes."""
    control = run_control(aoti_repro, timeout=300)
    assert control.reproduced, control.line  # `reproduced` here: the control passed
    assert control.line.startswith("NOT REPRODUCED")


def test_program_control_turns_aoti_off(aoti_repro, tmp_path):
    """A program candidate's control run turns AOTInductor off too; the compiled run does not."""
    control = run_program(aoti_repro, tmp_path, 300, control=True)
    assert control.passed, control.line
    compiled = run_program(aoti_repro, tmp_path, 300)
    assert not compiled.passed and "exp" in compiled.line, compiled.line


@pytest.mark.e2e
def test_aoti_accuracy_ends_in_verified_repro(tmp_path):
    """A wrong value in an AOTInductor package: found by checking the package against its exported
    program run eagerly, its exported graph reduced to the planted op, and repro.py (the small
    graph exported, compiled with aoti_compile_and_package, loaded and run) verified in a fresh
    process and with AOTInductor off. Before, exit 9 (and before that 0 graphs and a false exit 2)."""
    script = tmp_path / "deploy.py"
    source = (CORPUS / "aoti" / "relu_accuracy_mlp.py").read_text()
    script.write_text(source.replace('    print("scores[0]:", package(x)[0])',
                                     '    torch.testing.assert_close(package(x), model(x))'))
    out = tmp_path / "out"
    done = run_minify([str(script), "-o", str(out)], tmp_path)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "reproduced" and report["verified"] is True, report
    assert report["aoti_package"] == 0 and report["failure"]["kind"] == "accuracy"
    assert 1 <= report["ops_after"] <= 3 and "relu" in report["ops"], report["ops"]
    assert off_schema(report) == []
    repro = (out / "repro.py").read_text()
    assert "aoti_compile_and_package" in repro and "torch.compile(" not in repro
    package = out / "work" / "capture" / "aoti_0"
    record = json.loads((package / "record.json").read_text())
    assert record["failure"]["kind"] == "accuracy" and record["calls"] == 1
    assert (package / "exported.pt2").exists() and (package / "inputs.pt").exists()


@pytest.mark.e2e
def test_aoti_compile_error_in_a_cond_branch_not_taken(tmp_path):
    """A compile error inside the torch.cond branch the input does not take (the package compiles
    both): the exported graph is flattened, the taken branch alone compiles, so the branch not
    taken is inlined beside it, and the flat graph reduces to the planted op with a verified repro
    that has no cond. Before, exit 9 ("its exported graph holds subgraphs"). The compile error is
    raised before any C++ is built, so the run is short."""
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "aoti" / "cond_untaken_exp_compile_error.py"), "-o", str(out)], ROOT)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["verified"] is True and report["failure"]["kind"] == "compile_error", report
    assert report["ops"] == ["exp"], report["ops"]
    assert len(report["aoti_flattened"]) == 1 and "branch not taken (false_graph_0)" in report["aoti_flattened"][0]
    assert off_schema(report) == []
    repro = (out / "repro.py").read_text()
    assert "aoti_compile_and_package" in repro and "higher_order" not in repro and "flattened" in repro


def _exp_compile_error_folder(folder: Path) -> Path:
    """An AOTInductor repro folder of one exp whose planted lowering error raises before any C++ is built."""
    import torch
    import torch.fx as fx

    from compiler.inject import parse_spec
    from compiler.stages import CompileSetup, CompileSpec
    from repro.writer import ReproInfo, write_repro

    class Exp(torch.nn.Module):
        def forward(self, x):
            return (torch.exp(x),)

    gm = fx.symbolic_trace(Exp())
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    message = "LoweringException: RuntimeError: injected lowering bug: aten.exp cannot be lowered"
    info = ReproInfo(signature=f"compile_error@inductor|{message}", kind="compile_error", stage="inductor",
                     message=message, source="deploy.py, AOTInductor package 0", script="deploy.py", graph=0,
                     setup=CompileSetup(CompileSpec(backend="aoti", grad_enabled=False),
                                        (parse_spec("lowering:exp:compile_error").to_dict(),)))
    write_repro(folder, gm, [torch.randn(3)], info)
    return folder


def test_replay_runs_an_aoti_repro_folder(tmp_path, capsys):
    """`minify replay` on an AOTInductor repro folder: repro.py's verdict (exit 1, REPRODUCED) and
    minify's oracle judging the graph compiled the same way, with aoti_compile_and_package (before,
    the oracle's run called torch.compile(backend="aoti") and printed nothing). The planted lowering
    error raises before any C++ is built, so the test is quick."""
    from repro import replay

    folder = _exp_compile_error_folder(tmp_path / "out")
    assert replay.main([str(folder)]) == 1
    said = capsys.readouterr().out
    assert "  reference:" in said and said.strip().splitlines()[-1].startswith("REPRODUCED"), said


def test_a_test_written_from_an_aoti_repro_folder_compiles_ahead_of_time(tmp_path):
    """`minify test-from --with-injection` on an AOTInductor repro folder: the test's check compiles
    as repro.py does (before, its check called aoti_compile, which the test did not define)."""
    import subprocess
    import sys

    from repro.testgen import write_test

    test = write_test(_exp_compile_error_folder(tmp_path / "out"), tmp_path / "tests", with_injection=True)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 1 and "injected lowering bug" in run.stdout, run.stdout[-3000:]
    assert "NameError" not in run.stdout


def test_aoti_backend_compiles_ahead_of_time(tmp_path):
    """The backend `aoti` of a CompileSpec (how a candidate is asked when the failure shows only
    under AOTInductor) exports the graph and calls aoti_compile_and_package, not torch.compile:
    the planted lowering error is raised from inside it (it raises at once: no C++ is built)."""
    import traceback

    import torch

    from compiler.inject import injected, parse_spec
    from compiler.stages import CompileSpec, compile_for_stage

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.exp(x) + 1

    with injected(parse_spec("lowering:exp:compile_error")), pytest.raises(Exception) as raised:
        compile_for_stage(M(), "inductor", CompileSpec(backend="aoti"))(torch.randn(3))
    frames = [frame.name for frame in traceback.extract_tb(raised.value.__traceback__)]
    assert "aoti_compile_and_package" in frames, frames


@pytest.mark.e2e
def test_export_failure_is_the_users(tmp_path):
    """torch.export.export refuses data-dependent control flow without torch.cond: exit 2 with
    the exporter's message, not a bug report."""
    script = tmp_path / "export_gate.py"
    script.write_text(textwrap.dedent('''
        import torch

        class Gate(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x.relu()
                return x.sin()

        x = torch.randn(4, 8)
        ep = torch.export.export(Gate(), (x,))
        print(torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))(x))
    '''))
    done = run_minify([str(script), "-o", str(tmp_path / "out")], tmp_path)
    assert done.returncode == EXIT_BAD_INPUT, done.stdout + done.stderr
    assert "torch.export.export fails on the program" in done.stderr
    assert "data-dependent" in done.stderr, done.stderr


def test_torch_own_compile_calls_are_not_the_scripts(tmp_path):
    """torch.cond run eagerly (as export runs it) compiles its branches with torch.compile
    itself: the capture records only the script's own compiled function, and the script runs."""
    script = tmp_path / "cond_eager.py"
    script.write_text(textwrap.dedent('''
        import torch

        x = torch.randn(3)
        print(torch.cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,)))
        print(torch.compile(lambda t: t * 2, backend="eager")(x))
    '''))
    capture = run_capture(script, [], tmp_path / "capture", tmp_path / "capture.log", 300)
    assert capture.script["status"] == "ok", capture.script
    assert capture.script["callables"] == 1 and len(capture.graphs) == 1


def test_packages_the_control_cannot_turn_off_get_no_verdict(tmp_path):
    """A package the script loaded but did not compile (no exported program to run instead),
    or a program that fails end to end with AOTInductor in it: exit 9, never a program-level
    verdict; a run whose packages all passed goes on."""
    from minifier.program import aoti_stage
    from minifier.start.launch import UserError

    (tmp_path / "aoti_0").mkdir()
    (tmp_path / "aoti_0" / "record.json").write_text(json.dumps({"index": 0, "calls": 1,
                                                                  "verdict": {"status": "pass"}}))
    capture = Capture([], {"status": "error", "type": "AssertionError", "message": "x"}, 1.0, folder=tmp_path)
    aoti_stage.refuse(capture)  # every package passed its check: nothing to say yet
    with pytest.raises(UserError) as ended:
        aoti_stage.refuse_program_level(capture, "AssertionError: x", tmp_path, {})
    assert ended.value.code == EXIT_UNSUPPORTED and "passes with it turned off" in str(ended.value)
    assert json.loads((tmp_path / "report.json").read_text())["status"] == "unsupported"
    (tmp_path / "aoti_prebuilt.txt").write_text("/models/deployed.pt2\n")
    with pytest.raises(UserError) as ended:
        aoti_stage.refuse(capture)
    assert ended.value.code == EXIT_UNSUPPORTED and "/models/deployed.pt2" in str(ended.value)


def aoti_cases() -> list[dict]:
    return json.loads((CORPUS / "aoti" / "manifest.json").read_text())


@pytest.mark.e2e
@pytest.mark.corpus
@pytest.mark.parametrize("case", aoti_cases(), ids=lambda c: c["name"])
def test_aoti_corpus_case(case, tmp_path):
    """Each AOTInductor case ends as its manifest says: a verified repro of its culprit op in at
    most three ops (exit 0), or exit 9 naming the package and the kind of failure."""
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "aoti" / case["script"]), "-o", str(out)], ROOT)
    assert done.returncode == case["exit"], done.stdout + done.stderr
    if case["exit"] == EXIT_UNSUPPORTED:
        assert case["expect"] in done.stderr, done.stderr
        return
    report = json.loads((out / "report.json").read_text())
    assert report["verified"] is True and report["ops_after"] <= 3, report
    assert set(case["culprit_ops"]) <= set(report["ops"]), report["ops"]
