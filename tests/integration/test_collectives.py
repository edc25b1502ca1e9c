"""Graphs holding functional collectives: replayed on one process with each collective replaced by
its recorded result (compiler/collectives.py), and, where the collective itself is the bug, a repro
that starts its own ranks (minifier/distributed/two_rank.py). Real Dynamo graphs, real gloo."""
import json

import pytest
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from compiler.collectives import Recorder, has_collectives, peers_value, without_collectives
from compiler.inject import parse_spec
from minifier.capture.process import GraphRecord
from minifier.distributed import two_rank


@pytest.fixture
def one_rank_group(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    yield dist.group.WORLD
    dist.destroy_process_group()


def _dynamo_graph(fn, *args) -> torch.fx.GraphModule:
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend)(*args)
    return graphs[0]


def test_a_collective_is_replaced_by_its_recorded_result_and_its_input_still_counts(one_rank_group):
    def step(x, w):
        s = funcol.all_reduce(torch.relu(x @ w), "sum", dist.group.WORLD)
        m = funcol.all_reduce(torch.sigmoid(x), "max", dist.group.WORLD)
        return torch.tanh(s) + 1, m * 2

    x, w = torch.randn(4, 8), torch.randn(8, 8)
    gm = _dynamo_graph(step, x, w)
    recorder = Recorder(gm)
    expected = recorder.run(x, w)
    plain, waits = without_collectives(gm, recorder.seen)
    assert has_collectives(gm) and not has_collectives(plain) and len(waits) == 2
    assert [recorder.seen[w]["op"] for w in waits] == ["all_reduce", "all_reduce"]
    peers = [peers_value(recorder.seen[w]) for w in waits]
    for got, want in zip(plain(x, w, *peers), expected):
        torch.testing.assert_close(got, want)
    # a wrong value before the collective still reaches the outputs, as it did on the rank
    assert not torch.allclose(plain(x + 1, w, *peers)[0], expected[0])


def test_a_two_rank_repro_reproduces_a_wrong_collective_lowering_and_passes_without_the_compiler(tmp_path):
    """The repro forks itself into 2 gloo ranks, each fed its own recorded input: exit 1 compiled
    (the planted doubled wait), 0 with the compiler off; verified in fresh processes."""
    spec = parse_spec("lowering:_c10d_functional.wait_tensor:accuracy:double")
    record = {"collectives": [{"wait": "s", "op": "all_reduce", "args": [None, "sum", "0"]}],
              "injections": [spec.to_dict()], "collective_bug": True, "part": "forward"}
    for rank in range(2):
        folder = tmp_path / "capture" / f"rank_{rank}" / "graph_0"
        folder.mkdir(parents=True)
        torch.save({"s": {"input": torch.randn(4, 8), "result": None}}, folder / "collective_values.pt")
        (folder / "record.json").write_text(json.dumps(record))
    g = GraphRecord(0, tmp_path / "capture" / "rank_0" / "graph_0", 9, record, {"kind": "accuracy"})
    out = tmp_path / "out"
    out.mkdir()
    row = two_rank.report_row(out, g, 0, 2, "job.py", 1)
    assert row["verified"] is True, row["verify_line"]
    assert "rank(s) [0, 1]" in row["verify_line"] and row["ops_after"] == 2
    head = (out / "repro.py").read_text().splitlines()[0]
    assert "all_reduce" in head and "rank 0 of 2, graph 0" in head


def test_a_planted_post_grad_pass_rewrites_the_all_reduce_inductor_compiles_and_is_removed(one_rank_group):
    from torch._inductor.utils import run_and_get_code

    from compiler.inject import injected

    def step(x):
        return funcol.all_reduce(torch.sin(x), "sum", dist.group.WORLD) + 1

    def code() -> str:
        torch._dynamo.reset()
        _, sources = run_and_get_code(torch.compile(step), torch.randn(4, 8))
        return "\n".join(sources)

    with injected(parse_spec("postgrad:all_reduce:max")):
        planted = code()
    assert "all_reduce_.default(buf" in planted and "'max'" in planted and "'sum'" not in planted, planted
    assert "'sum'" in code()  # undone
    with pytest.raises(ValueError, match="post-grad pass op"):
        parse_spec("postgrad:relu:max")
