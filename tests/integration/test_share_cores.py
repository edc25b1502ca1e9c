"""minify's processes wait for work without spinning (compiler.settings.share_cores): the
capture, the zygote and everything forked from it start with OMP_WAIT_POLICY=PASSIVE, so that
two workers, or the capture and the zygote's warm-up, do not take each other's cores. A user's
own setting is kept."""
import pytest


@pytest.mark.slow
@pytest.mark.parametrize("users, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_script_runs_with_passive_openmp_threads_unless_the_user_chose(tmp_path, monkeypatch, users, expected):
    from minifier.start.launch import Options, launch

    if users is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)  # restored after the test
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", users)
    script, seen = tmp_path / "script.py", tmp_path / "seen.txt"
    script.write_text(f"import os\nopen({str(seen)!r}, 'w').write(os.environ.get('OMP_WAIT_POLICY', 'unset'))\n")
    launched = launch(Options(script=script, out=tmp_path / "out", jobs=1, verify=False))
    try:
        launched.capture.finish(120.0)
    finally:
        launched.stop()
    assert seen.read_text() == expected
