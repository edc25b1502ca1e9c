"""FX tracing patches torch for the whole process; another thread's torch work must not see it.

The search traces candidates on the main thread while a repro is written (torch.load of the
recorded values, tensors built) on another: on an H100 that thread once built FX proxies and the
run ended in `NotImplementedError: argument of type: <class 'torch.storage.UntypedStorage'>`.
"""
import threading

import torch

from compiler.graph_code import module_from_source, trace_module

SOURCE = """
import torch
class Repro(torch.nn.Module):
    def forward(self, x):
        return torch.ones(3) + torch.arange(3.0) * x
"""


def test_tracing_on_one_thread_leaves_torch_alone_on_another(tmp_path):
    torch.save({"x": torch.arange(6.0)}, tmp_path / "values.pt")
    stop, errors = threading.Event(), []

    def load_and_build():
        while not stop.is_set():
            try:
                values = torch.load(tmp_path / "values.pt", weights_only=True)
                built = torch.ones(2) + torch.tensor([1.0, 2.0]) + torch.ops.aten.add.Tensor(torch.zeros(2), 1)
                assert isinstance(values["x"], torch.Tensor) and isinstance(built, torch.Tensor)
            except Exception as exc:  # noqa: BLE001 (the failure under test)
                errors.append(exc)
                return

    other = threading.Thread(target=load_and_build)
    other.start()
    model = module_from_source(SOURCE)
    try:
        for _ in range(300):
            gm = trace_module(model)
    finally:
        stop.set()
        other.join()
    assert not errors, errors[0]
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][:2] == [torch.ones, torch.arange]
