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


@pytest.mark.slow
def test_a_users_forced_graph_cache_does_not_reach_the_script_minify_compiles(tmp_path, monkeypatch):
    """torch reads TORCHINDUCTOR_FX_GRAPH_CACHE=1 as a force over the config minify sets, so a clean
    compile could have been served to a planted one: launch drops it (compiler.settings.OVERRIDES)."""
    from minifier.start.launch import Options, launch

    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")  # restored after the test
    script, seen = tmp_path / "script.py", tmp_path / "seen.txt"
    script.write_text("import torch._inductor.config as c\n"
                      f"open({str(seen)!r}, 'w').write(str(c.fx_graph_cache))\n")
    launched = launch(Options(script=script, out=tmp_path / "out", jobs=1, verify=False))
    try:
        launched.capture.finish(120.0)
    finally:
        launched.stop()
    assert seen.read_text() == "False"
