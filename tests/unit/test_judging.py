"""--atol, --rtol, --strict and --ignore travel as one Judging from the command line to every
judgement: the options, each worker job (flat on the wire, as saved answers' keys name them),
the capture's own checks, and back."""
import json

from compiler.judging import Judging
from minifier.cli import _options, parser
from minifier.capture.process import CaptureOptions
from minifier.workers.job import Job


def test_the_command_line_makes_one_judging_the_options_carry():
    ns = parser().parse_args(["s.py", "--atol", "0.01", "--strict", "--ignore", "layout"])
    judging = Judging(ns.atol, ns.rtol, ns.strict, ("layout",))
    assert _options(ns, [], judging).judging == Judging(0.01, None, True, ("layout",))
    assert judging.bitwise and not Judging().bitwise  # equal bits only under --strict


def test_a_job_carries_the_judging_flat_on_the_wire_and_back():
    judging = Judging(atol=0.5, strict=True, ignore=["signed_zero"])
    job = Job(source="", inputs=(), case_dir="/x", spec={}, judging=judging)
    wire = job.to_dict()
    assert (wire["atol"], wire.get("rtol"), wire["strict"], wire["ignore"]) == (0.5, None, True, ["signed_zero"])
    assert "judging" not in wire and Job.from_dict(wire).judging == judging
    assert job.key() != Job(source="", inputs=(), case_dir="/x", spec={}).key()


def test_the_capture_is_told_the_whole_judging():
    assert CaptureOptions().flags() == []
    flags = CaptureOptions(judging=Judging(rtol=0.2, ignore=("layout",))).flags()
    assert flags[0] == "--judging" and Judging.from_dict(json.loads(flags[1])) == Judging(None, 0.2, False, ("layout",))
