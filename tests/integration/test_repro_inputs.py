"""Inputs round-trip exactly through repro.py: inline literals and the saved file, in a fresh process.

Layout (strides, storage offset, channels_last), storage shared between inputs, dtypes whose
values have no short decimal form, NaN bit patterns, 0-dim tensors, requires_grad and Python
scalars must all come back bit for bit; loading must never unpickle arbitrary objects.
"""
import json
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.fx as fx

from compiler.stages import CompileSetup, CompileSpec
from repro.literals import BITS, float_element
from repro.writer import INPUTS_FILE, ReproInfo, write_repro


def tricky_inputs() -> dict:
    torch.manual_seed(0)
    shared = torch.randn(10)
    big_shared = torch.randn(40)
    big = torch.randn(6, 10)
    payload_nan = torch.tensor([0x7FC00123, -4194304], dtype=torch.int32).view(torch.float32)  # +NaN(payload), -NaN
    return {
        "noncontig": torch.randn(3, 4).t(),
        "cl_small": torch.randn(1, 2, 2, 2).to(memory_format=torch.channels_last),
        "cl_big": torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
        "offset": torch.randn(12)[5:9],
        "big_offset": big[1:, 2:],
        "alias_a": shared[:6], "alias_b": shared.view(2, 5)[:, 1:],
        "big_alias_a": big_shared[:30], "big_alias_b": big_shared.view(4, 10)[1:],
        "i64": torch.tensor([-2**63, 2**63 - 1, 0, 7]),
        "flags": torch.tensor([[True, False], [False, True]]),
        "half": torch.randn(5).half(),
        "bf16": torch.randn(5).bfloat16(),
        "special": torch.cat([payload_nan, torch.tensor([-0.0, float("inf"), -float("inf"), 1e-45, 0.1])]),
        "zero_dim": torch.tensor(2.5),
        "grad": torch.randn(3, requires_grad=True),
        "count": 7, "scale": 0.1, "flag": True, "nothing": None,
    }


def tiny_graph(names: list[str]) -> fx.GraphModule:
    """forward(*names) -> (noncontig * 2,): the graph hardly matters, its inputs do."""
    graph = fx.Graph()
    nodes = {name: graph.placeholder(name) for name in names}
    for node in nodes.values():
        node.meta["value"] = node.name
    graph.output((graph.call_function(torch.mul, (nodes[names[0]], 2)),))
    return fx.GraphModule(torch.nn.Module(), graph)


def write(folder, values: dict):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="test inputs",
                     setup=CompileSetup(CompileSpec(), []), source="test_repro_inputs.py, graph 0 of 1")
    return write_repro(folder, tiny_graph(list(values)), list(values.values()), info)


CHECK_INSIDE = textwrap.dedent("""\
    import importlib.util, json, sys
    import torch
    spec = importlib.util.spec_from_file_location("the_repro", sys.argv[1])
    repro = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(repro)
    got = repro.make_inputs("cpu")
    want = torch.load(sys.argv[2], weights_only=True)
    problems = []
    def bits(t):
        t = t.detach()
        if t.dtype == torch.bool:
            return t.to(torch.uint8)
        if not t.is_floating_point():
            return t
        return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    for i, (a, b) in enumerate(zip(want, got)):
        if not isinstance(a, torch.Tensor):
            if type(a) is not type(b) or a != b:
                problems.append(f"input {i}: {a!r} != {b!r}")
            continue
        for what in ("dtype", "shape", "device", "requires_grad"):
            if getattr(a, what) != getattr(b, what):
                problems.append(f"input {i}: {what} {getattr(a, what)} != {getattr(b, what)}")
        if a.stride() != b.stride() or a.storage_offset() != b.storage_offset():
            problems.append(f"input {i}: layout {a.stride()}+{a.storage_offset()} != {b.stride()}+{b.storage_offset()}")
        if a.untyped_storage().nbytes() != b.untyped_storage().nbytes():
            problems.append(f"input {i}: storage size differs")
        if not torch.equal(bits(a), bits(b)):
            problems.append(f"input {i}: values differ: {a} != {b}")
    tensors = [i for i, a in enumerate(want) if isinstance(a, torch.Tensor)]
    for i in tensors:
        for j in tensors:
            same_want = want[i].untyped_storage().data_ptr() == want[j].untyped_storage().data_ptr()
            same_got = got[i].untyped_storage().data_ptr() == got[j].untyped_storage().data_ptr()
            if same_want != same_got:
                problems.append(f"inputs {i} and {j}: shared storage {same_want} -> {same_got}")
    print(json.dumps({"problems": problems, "count": len(got)}))
    """)


@pytest.mark.slow
def test_inputs_round_trip_exactly_in_a_fresh_process(tmp_path):
    values = tricky_inputs()
    repro = write(tmp_path / "repro", values)
    source = repro.read_text()
    assert "torch.tensor([-9223372036854775808, 9223372036854775807, 0, 7], dtype=torch.int64" in source
    assert "storage shared by alias_a, alias_b" in source and ".view(torch.float32)" in source  # NaN bits
    saved = torch.load(tmp_path / "repro" / INPUTS_FILE, weights_only=True)
    assert len(saved) == 4  # only the tensors whose storage is larger than 16 elements go to the file
    torch.save(list(values.values()), tmp_path / "expected.pt")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-I", "-c", CHECK_INSIDE, str(repro), str(tmp_path / "expected.pt")],
                          cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"problems": [], "count": len(values)}
    # With all of them, the repro runs; there is no bug in `mul`, so it says so and exits 0.
    proc = subprocess.run([sys.executable, "-I", str(repro)], cwd=elsewhere, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip() == "NOT REPRODUCED: compiled matches eager"


def test_float_literals_are_the_shortest_exact_ones():
    torch.manual_seed(1)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        values = torch.cat([torch.randn(200), torch.randn(50) * 1e-6, torch.randn(50) * 1e4]).to(dtype)
        texts = [float_element(v, dtype) for v in values.tolist()]
        back = torch.tensor([float(t) for t in texts], dtype=dtype)
        assert torch.equal(back.view(BITS[dtype]), values.view(BITS[dtype])), dtype
        assert max(len(t) for t in texts) <= {torch.float16: 12, torch.bfloat16: 12}.get(dtype, 25)


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


@pytest.mark.slow
def test_repro_refuses_pickled_objects(tmp_path):
    """A tampered inputs file is never unpickled: repro.py says it cannot run (exit 2), with
    weights_only's error, and never says REPRODUCED."""
    values = {"x": torch.randn(40)}
    repro = write(tmp_path / "repro", values)
    with open(tmp_path / "repro" / INPUTS_FILE, "wb") as f:
        torch.save([Evil()], f, pickle_module=pickle)
    proc = subprocess.run([sys.executable, str(repro)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout.startswith("CANNOT RUN: cannot load") and \
        "UnpicklingError" in proc.stdout, proc.stdout + proc.stderr  # no verdict: it cannot run
    assert "pwned" not in proc.stdout + proc.stderr and "REPRODUCED" not in proc.stdout
