"""The subset search behind "these graphs fail only together", and how script runs end."""
import torch

from compiler.call_outputs import save_outputs
from compiler.judging import Judging
from minifier.capture.process import Capture
from minifier.program.interaction import outputs_differ, script_failure
from minifier.reduce.delta_core import ddmin, one_at_a_time


def _counting(needed_any: list[set]):
    calls = []

    def fails(subset):
        calls.append(list(subset))
        return any(need <= set(subset) for need in needed_any)

    return fails, calls


def test_finds_the_pair_that_must_be_compiled_together():
    keys = ["0", "0.bw", "1", "2", "3", "3.bw"]
    fails, calls = _counting([{"0", "3.bw"}])
    assert ddmin(keys, one_at_a_time(fails)) == ["0", "3.bw"]
    assert len(calls) < 2 ** len(keys) // 2


def test_single_graph_and_one_minimal_answers():
    fails, _ = _counting([{"2"}])
    assert ddmin(["0", "1", "2", "3"], one_at_a_time(fails)) == ["2"]
    fails, _ = _counting([{"0", "1"}, {"3"}])
    found = ddmin(["0", "1", "2", "3"], one_at_a_time(fails))
    assert fails(found)
    assert all(not fails([k for k in found if k != drop]) for drop in found)  # 1-minimal


def test_script_failure_lines():
    assert script_failure({"status": "ok"}) is None
    assert script_failure({"status": "exit", "code": 0}) is None
    assert script_failure({"status": "exit", "code": 3}) == "exit status 3"
    assert script_failure({"status": "error", "type": "ValueError", "message": "bad\nmore"}) == "ValueError: bad"
    assert script_failure({"status": "crash", "message": "process died: SIGSEGV"}) == "process died: SIGSEGV"


def _run_saving(folder, out):
    """A finished run of a script whose one compiled function first returned `out`."""
    save_outputs(folder / "calls" / "0.pt", out)
    return Capture(graphs=[], script={"status": "ok"}, seconds=0.0, folder=folder)


def test_the_program_level_comparison_judges_as_the_run_does(tmp_path):
    """The script's outputs, compiled against eager, are judged with the run's Judging (carried
    whole from its options): one ulp apart is within the tolerances but fails --strict's equal
    bits, and the user's --atol lets a larger difference pass."""
    x = torch.tensor([1.0, 2.0, 3.0])
    eager = _run_saving(tmp_path / "eager", x)
    ulp = _run_saving(tmp_path / "ulp", torch.nextafter(x, torch.full_like(x, 4.0)))
    off = _run_saving(tmp_path / "off", x + 1e-2)
    assert outputs_differ(ulp, eager) is None
    strict = outputs_differ(ulp, eager, Judging(strict=True))
    assert strict is not None and strict.how == "outputs" and strict.metrics[0]["rung"] == "bitwise"
    assert outputs_differ(off, eager) is not None
    assert outputs_differ(off, eager, Judging(atol=0.1)) is None


def test_a_traceback_clipped_inside_a_frame_still_names_the_users_line():
    """The capture keeps a long traceback's head and tail with `...` between; a cut inside a
    `File "..."` must not join two half-lines into a frame of the user's (a DDP program broken in
    eager too was called Dynamo's bug so)."""
    from minifier.program.interaction import fails_in_eager_too, user_line

    user = '  File "/home/u/train.py", line 17, in main\n    ddp(x).sum().backward()\n'
    lib = '  File "/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1789, in _call_impl\n'
    clipped = user + lib + '  File "/home/\n...\nt.py", line 4511, in _call\n' + lib
    compiled = {"status": "error", "type": "TorchRuntimeError", "traceback": clipped,
                "message": "RuntimeError when making fake tensor call\n\nfrom user code:\n" + lib}
    eager = {"status": "error", "type": "RuntimeError", "traceback": user + lib,
             "message": "mat1 and mat2 shapes cannot be multiplied (4x17 and 16x32)"}
    assert user_line(compiled) == user_line(eager) == ("/home/u/train.py", 17)
    assert fails_in_eager_too(compiled, eager) is not None
