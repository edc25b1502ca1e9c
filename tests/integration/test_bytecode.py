"""The run's own bytecode cache: used only where Python keeps none beside torch's sources, written
only into the output folder, and everything put back when the run ends."""
import json
import os
import py_compile
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

from minifier.workers.bytecode import sources

# Runs in a child whose `torch` is a three-module stand-in without bytecode.
PROBE = textwrap.dedent("""
    import json, os, subprocess, sys
    from pathlib import Path
    from minifier.workers.bytecode import compile_one, uncached, use_prefix
    work, site = Path(sys.argv[1]), Path(sys.argv[2])
    seen = {"uncached": uncached()}
    prefix = use_prefix(work, cores=int(sys.argv[3]), forked=sys.argv[4] == "forked")
    seen["prefix"] = prefix is not None
    if prefix is not None and prefix.compiling is not None:  # stopped while its pool compiles
        import time
        time.sleep(3)
        seen["compiled_some"] = any((work / "pycache").rglob("*.pyc"))
        prefix.close()
        time.sleep(2)
        seen["folder_left"] = (work / "pycache").exists()
    elif prefix is not None:
        seen["env"] = {k: os.environ.get(k) for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
        subprocess.run([sys.executable, "-c", "import torch.sub"], check=True)
        compile_one(str(site / "torch" / "other.py"))
        seen["cached"] = sorted(p.name for p in (work / "pycache").rglob("*.pyc") if "torch" in p.parts)
        prefix.close()
        seen["after"] = {k: os.environ.get(k) for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
        seen["after_sys"] = [sys.pycache_prefix, sys.dont_write_bytecode]
        seen["folder_left"] = (work / "pycache").exists()
    seen["beside_sources"] = (site / "torch" / "__pycache__").exists()
    print(json.dumps(seen))
""")


def _fake_torch(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    for name in ("__init__", "sub", "other"):
        (site / "torch" / f"{name}.py").write_text("VALUE = 1\n")
    return site


def _probe(tmp_path: Path, site: Path, env: dict, cores: int = 2, forked: bool = False, **extra) -> dict:
    env = {k: v for k, v in env.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(extra, PYTHONPATH=f"{site}{os.pathsep}{ROOT}")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "work"), str(site), str(cores),
                           "forked" if forked else "spawned"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_torch_without_bytecode_gets_the_runs_own_cache_and_everything_is_put_back(tmp_path, project_env):
    site = _fake_torch(tmp_path)
    seen = _probe(tmp_path, site, project_env, PYTHONDONTWRITEBYTECODE="1")
    assert seen["uncached"] and seen["prefix"]
    assert seen["env"] == {"PYTHONPYCACHEPREFIX": str(tmp_path / "work" / "pycache"), "PYTHONDONTWRITEBYTECODE": None}
    tag = sys.implementation.cache_tag
    # the child's import and the bulk compile both wrote into the prefix, nothing beside the sources
    assert seen["cached"] == sorted([f"__init__.{tag}.pyc", f"other.{tag}.pyc", f"sub.{tag}.pyc"])
    assert not seen["beside_sources"]
    assert seen["after"] == {"PYTHONPYCACHEPREFIX": None, "PYTHONDONTWRITEBYTECODE": "1"}
    assert seen["after_sys"] == [None, True] and not seen["folder_left"]


def test_bytecode_beside_the_sources_or_a_users_own_prefix_is_left_alone(tmp_path, project_env):
    site = _fake_torch(tmp_path)
    users = str(tmp_path / "mine")
    assert not _probe(tmp_path, site, project_env, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=users)["uncached"]
    if os.access(site / "torch", os.W_OK):  # Python may write it there itself
        assert not _probe(tmp_path, site, project_env)["uncached"]
    py_compile.compile(str(site / "torch" / "__init__.py"), doraise=True)
    assert not _probe(tmp_path, site, project_env, PYTHONDONTWRITEBYTECODE="1")["uncached"]


def test_the_bulk_compile_covers_torch_what_it_imports_and_this_project():
    found = set(sources())
    import sympy
    import torch

    torch_dir = Path(torch.__file__).parent
    for path in (torch_dir / "__init__.py", torch_dir / "_inductor" / "graph.py", Path(sympy.__file__),
                 Path(sysconfig.get_paths()["stdlib"]) / "os.py", ROOT / "compiler" / "oracle.py"):
        assert str(path) in found, path
    stdlib_tests = Path(sysconfig.get_paths()["stdlib"]) / "test"
    assert not any(p.startswith(f"{stdlib_tests}{os.sep}") for p in found)


@pytest.mark.slow
def test_the_bulk_compile_stops_with_the_run_and_leaves_no_folder(tmp_path, project_env):
    seen = _probe(tmp_path, _fake_torch(tmp_path), project_env, cores=4, PYTHONDONTWRITEBYTECODE="1")
    assert seen["compiled_some"]  # its pool was at work when the run ended
    assert not seen["folder_left"]  # and none of its processes wrote on after


def test_two_cores_with_a_zygote_keep_pythons_own_behaviour(tmp_path, project_env):
    seen = _probe(tmp_path, _fake_torch(tmp_path), project_env, cores=2, forked=True, PYTHONDONTWRITEBYTECODE="1")
    assert seen["uncached"] and not seen["prefix"]
