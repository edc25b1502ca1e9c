"""corpus/gpu_models/run_device.py's table of real-model rows against the built-in minifier: the
ratio only where the built-in gave a repro that fails, its failure said where it did not, and the
line naming the run above it (git names the commit). No GPU needed: rows as the runner records them."""
import importlib.util
from pathlib import Path

import pytest

from minifier.bench.builtin import REPRO_LEVEL

RUNNER = Path(__file__).resolve().parents[2] / "corpus" / "gpu_models" / "run_device.py"


@pytest.fixture(scope="module")
def runner():
    spec = importlib.util.spec_from_file_location("run_device", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(name, wall, builtin):
    return {"name": name, "plant": "relu:accuracy:double@triton", "wall": wall, "ops": ["relu"], "verified": True,
            "builtin": builtin}


def test_the_table_gives_a_ratio_only_where_the_builtin_gave_a_failing_repro(runner):
    rows = [_row("a", 30.0, {"outcome": "ok", "seconds": 60.0, "ops_after": 1, "reproduces": True, "queries": 9}),
            _row("b", 30.0, {"outcome": "ok", "seconds": 60.0, "ops_after": 3, "reproduces": False, "queries": 4}),
            _row("c", 30.0, {"outcome": "minify failed", "failure": "Input graph did not fail the tester",
                             "seconds": 12.0})]
    text = runner.table(rows)
    head, _, _, _, a, b, c = text.splitlines()
    assert head.startswith("corpus/gpu_models/run_device.py --vs-builtin, ") and ", torch " in head
    assert a.endswith("| one op (9 queries) | 0.50x |")
    assert "repro.py passes" in b and b.endswith("| - |")
    assert "Input graph did not fail the tester" in c and c.endswith("| - |")


def test_every_kind_of_the_gpu_set_has_a_builtin_repro_level(runner):
    import json

    cases = json.loads((RUNNER.parent / "manifest.json").read_text())
    assert {c["kind"] for c in cases} <= set(REPRO_LEVEL)
