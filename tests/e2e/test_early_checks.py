"""While the script still runs under the capture, each graph's first checks go to the workers:
the capture saves a graph's inputs when Dynamo hands it over, before Inductor compiles it, and
the replays, tries and stage checks a confirmation starts with do not depend on how the
script's run ends (minifier/localize/early_checks.py). On by default with 4 cores or more;
forced here."""
import json

import pytest

from conftest import CORPUS, run_minify


@pytest.fixture(scope="module")
def crashed_early(tmp_path_factory):
    """A case whose kernel aborts the process, with early checks on."""
    tmp = tmp_path_factory.mktemp("early")
    out = tmp / "out"
    done = run_minify([str(CORPUS / "log1p_crash_strided_scalar.py"), "-o", str(out), "-q", "-j", "2",
                       "--no-blame", "--early-checks", "on"], cwd=tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "report.json").read_text()), out


@pytest.mark.slow
def test_the_capture_saves_a_graphs_inputs_before_compiling_it(crashed_early):
    _, out = crashed_early
    graph = out / "work" / "capture" / "graph_0"
    called = (out / "work" / "capture" / "calling").stat().st_mtime  # written at its first (crashing) call
    assert called - (graph / "inputs.pt").stat().st_mtime > 0.2  # the C++ compile came in between
    assert "requires_grad" in json.loads((graph / "record.json").read_text())


@pytest.mark.slow
def test_a_crash_is_confirmed_from_checks_asked_while_the_script_ran(crashed_early):
    report, out = crashed_early
    assert report["ops"] == ["log1p"] and report["verified"] is True, report
    timeline = json.loads((out / "work" / "timeline.json").read_text())
    capture, = [row for row in timeline if row["op"] == "capture"]
    assert capture["status"] == "crash"
    ended = capture["start"] + capture["seconds"]
    whole = max(row["source_lines"] for row in timeline if row["op"] == "check")
    first = [row for row in timeline if row["op"] == "check" and row["source_lines"] == whole]
    replays = [row for row in first if row["stage"] == "inductor"]
    # The first replay (three runs asked, the crash ended it after one), each stage before
    # Inductor and the two further tries (each a process of its own): asked once each, all
    # before the script's run ended.
    assert sorted(row["runs"] for row in replays) == [1, 1, 3], replays
    assert sorted(row["stage"] for row in first) == ["aot_eager", "aot_eager_decomp_partition", "eager",
                                                     "inductor", "inductor", "inductor"], first
    assert all(row["queued"] < ended for row in first), (capture, first)


@pytest.mark.slow
def test_an_accuracy_bug_is_confirmed_from_the_replay_asked_while_the_script_ran(tmp_path):
    """relu's accuracy bug: the confirmation takes the replay asked early (three runs, one job)
    instead of asking its own replay of the graph with the values Inductor stores as further
    outputs; the bug is found as without early checks."""
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "relu_accuracy.py"), "-o", str(out), "-q", "-j", "2", "--no-blame",
                       "--early-checks", "on"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["ops"] == ["relu"] and report["verified"] is True, report
    timeline = json.loads((out / "work" / "timeline.json").read_text())
    whole = max(row["source_lines"] for row in timeline if row["op"] == "check")
    replays = [row for row in timeline if row["op"] == "check" and row["stage"] == "inductor"
               and row["source_lines"] >= whole]
    assert [row["runs"] for row in replays if row["runs"] == 3] == [3], replays
    assert not any(row.get("judged_outputs") for row in timeline), replays
