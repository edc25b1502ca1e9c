"""The subset search behind "these graphs fail only together", and how script runs end."""
from minifier.program.interaction import ddmin, script_failure


def _counting(needed_any: list[set]):
    calls = []

    def fails(subset):
        calls.append(list(subset))
        return any(need <= set(subset) for need in needed_any)

    return fails, calls


def test_finds_the_pair_that_must_be_compiled_together():
    keys = ["0", "0.bw", "1", "2", "3", "3.bw"]
    fails, calls = _counting([{"0", "3.bw"}])
    assert ddmin(keys, fails) == ["0", "3.bw"]
    assert len(calls) < 2 ** len(keys) // 2


def test_single_graph_and_one_minimal_answers():
    fails, _ = _counting([{"2"}])
    assert ddmin(["0", "1", "2", "3"], fails) == ["2"]
    fails, _ = _counting([{"0", "1"}, {"3"}])
    found = ddmin(["0", "1", "2", "3"], fails)
    assert fails(found)
    assert all(not fails([k for k in found if k != drop]) for drop in found)  # 1-minimal


def test_script_failure_lines():
    assert script_failure({"status": "ok"}) is None
    assert script_failure({"status": "exit", "code": 0}) is None
    assert script_failure({"status": "exit", "code": 3}) == "exit status 3"
    assert script_failure({"status": "error", "type": "ValueError", "message": "bad\nmore"}) == "ValueError: bad"
    assert script_failure({"status": "crash", "message": "process died: SIGSEGV"}) == "process died: SIGSEGV"
