"""minify's processes wait for work without spinning (compiler.settings.share_cores): the
capture, the zygote and everything forked from it start with OMP_WAIT_POLICY=PASSIVE, so that
two workers, or the capture and the zygote's warm-up, do not take each other's cores. A user's
own setting is kept."""
from pathlib import Path

import pytest

from conftest import CORPUS


def _environ(pid: int) -> dict:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.parametrize("users, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_capture_starts_with_passive_openmp_threads_unless_the_user_chose(tmp_path, monkeypatch, users,
                                                                              expected):
    from minifier.workers.launch import Options, launch

    if users is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)  # restored after the test
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", users)
    launched = launch(Options(script=CORPUS / "relu_accuracy.py", out=tmp_path / "out", jobs=1, verify=False))
    try:
        assert _environ(launched.capture.proc.pid).get("OMP_WAIT_POLICY") == expected
    finally:
        launched.stop()
