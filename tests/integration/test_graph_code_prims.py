"""A captured graph may call Inductor's own prims (the compiled Adam step's graph calls
torch.ops.prims.fma); they exist only once torch._inductor.inductor_prims is imported, so a fresh
worker must still load such a graph (corpus/programs/planted_compiled_optimizer_sqrt.py died with
"'prims' object has no attribute 'fma'" before)."""
import subprocess
import sys

import pytest

SOURCE = '''
import torch
class Repro(torch.nn.Module):
    def forward(self, a, b, c):
        return (torch.ops.prims.fma.default(a, b, c),)
'''


@pytest.mark.slow
def test_module_from_source_loads_inductor_prims_in_a_fresh_process(project_env):
    code = ("import sys, torch\n"
            "from compiler.graph_code import module_from_source\n"
            "assert 'torch._inductor.inductor_prims' not in sys.modules\n"
            f"m = module_from_source({SOURCE!r})\n"
            "x = torch.ones(3)\n"
            "print(m(x, x, x)[0].tolist())\n")
    proc = subprocess.run([sys.executable, "-c", code], env=project_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[2.0, 2.0, 2.0]" in proc.stdout


@pytest.mark.slow
def test_a_repro_that_calls_inductor_prims_runs_in_a_fresh_process(tmp_path):
    import torch
    import torch._inductor.inductor_prims  # noqa: F401
    import torch.fx as fx

    from compiler.stages import CompileSetup, CompileSpec
    from repro.writer import ReproInfo, write_repro

    graph = fx.Graph()
    a, b = graph.placeholder("a"), graph.placeholder("b")
    a.meta["value"], b.meta["value"] = "a", "b"
    graph.output((graph.call_function(torch.ops.prims.fma.default, (a, b, b)),))
    gm = fx.GraphModule(torch.nn.Module(), graph)
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="test",
                     setup=CompileSetup(CompileSpec(grad_enabled=False), []), source="test",
                     script="t.py", graph=0)
    repro = write_repro(tmp_path / "out", gm, [torch.ones(3), torch.ones(3)], info)
    proc = subprocess.run([sys.executable, "-I", str(repro)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert "has no attribute 'fma'" not in proc.stdout + proc.stderr
    assert proc.returncode == 0 and proc.stdout.startswith("NOT REPRODUCED"), proc.stdout + proc.stderr[-2000:]
