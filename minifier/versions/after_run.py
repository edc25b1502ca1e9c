"""`minify SCRIPT --versions LIST`: the regression window of the run's first verified repro,
as `minify versions OUT --torch LIST` gives it; the run's own exit status is kept."""
from __future__ import annotations

from pathlib import Path

from minifier.versions.command import run_versions
from minifier.versions.outcome import expected_of
from minifier.versions.specs import parse_specs
from repro.manifest import ReproFolderError

TIMEOUT = 600.0  # per version: a cold venv's first compile of the repro


def versions_after_run(out: Path, torch_list: str) -> int | None:
    """Run the repro in `out` under each version of `torch_list`, print the table and window and
    record them (issue.md, report.json); its status, or None when `out` holds no repro to run."""
    try:
        expected = expected_of(out)
    except ReproFolderError:
        return None
    return run_versions(expected, parse_specs(torch_list), None, "pip", None, TIMEOUT)
