"""Code minify builds as text runs as a real file (compiler/program_files.py): a graph's source
and a repro folder's program are written out and imported by path, each load a fresh module
that sys.modules does not keep."""
import inspect
import os
import sys
import traceback

import torch

from compiler import program_files
from compiler.graph_code import module_from_source, module_source, trace_module
from repro.runner import program_source


class Sin(torch.nn.Module):
    def forward(self, x):
        return (torch.sin(x) + 1,)


def test_a_graph_runs_from_a_file_of_the_folder_given(tmp_path):
    source = module_source(trace_module(Sin()))
    model = module_from_source(source, tmp_path)
    path = inspect.getsourcefile(type(model).forward)
    assert os.path.dirname(path) == str(tmp_path) and open(path).read() == source
    assert inspect.getsource(type(model).forward) in source  # inspect and linecache read the file
    assert torch.equal(model(torch.ones(3))[0], torch.sin(torch.ones(3)) + 1)
    broken = module_from_source(source.replace("torch.sin(", "torch.no_such_op("), tmp_path)
    try:
        broken(torch.ones(3))
    except AttributeError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-2]
        assert frame.filename.startswith(str(tmp_path)) and "torch.no_such_op(" in frame.line
    else:
        raise AssertionError("the broken graph ran")
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".py", ".py"]  # no bytecode, nothing half-written


def test_many_loads_keep_no_module_and_share_one_file(tmp_path):
    source = module_source(trace_module(Sin()))
    before = set(sys.modules)
    models = [module_from_source(source, tmp_path) for _ in range(50)]
    assert set(sys.modules) == before
    assert len({type(m) for m in models}) == 50 and len({type(m).__module__ for m in models}) == 50  # fresh each time
    assert len(list(tmp_path.iterdir())) == 1  # named by its content: written once


def test_a_run_names_its_folder_for_its_processes(tmp_path, monkeypatch):
    monkeypatch.delenv(program_files.FOLDER_ENV, raising=False)
    own = program_files.programs_folder()
    assert own.is_dir() and own == program_files.programs_folder()  # this process's own, made once
    named = program_files.RunPrograms.name(tmp_path / "work")
    assert program_files.programs_folder() == tmp_path / "work" / program_files.RUN_FOLDER
    module_from_source(module_source(trace_module(Sin())))
    assert [p.suffix for p in (tmp_path / "work" / program_files.RUN_FOLDER).iterdir()] == [".py"]
    named.close()
    assert program_files.FOLDER_ENV not in os.environ and program_files.programs_folder() == own


def test_a_repro_program_plants_only_when_asked(tmp_path):
    manifest = {"imports": ["import torch"], "inputs_file": "inputs.pt",
                "config_source": ["torch._inductor.config.cpp.simdlen = 1"], "injection_source": "PLANTED = True\n",
                "module_source": "class Repro(torch.nn.Module):\n    def forward(self, x):\n        return (x,)\n",
                "make_inputs_source": "def make_inputs(device):\n    return [INPUTS]\n"}
    planted, clean = program_source(tmp_path, manifest, plant=True), program_source(tmp_path, manifest, plant=False)
    assert "simdlen" in planted and "PLANTED" in planted and "simdlen" not in clean and "PLANTED" not in clean
    module = program_files.load_program(clean, "replay", tmp_path)
    assert module.make_inputs("cpu") == [(tmp_path / "inputs.pt").resolve()] and module.Repro()(1) == (1,)
