"""Saved inputs round-trip exactly and load without unpickling arbitrary objects."""
import pickle

import pytest
import torch

from repro.inputs import load_inputs, save_inputs


def test_roundtrip_keeps_dtype_layout_and_values(tmp_path):
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    values = [base.t()[2:, 1:], torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last),
              torch.arange(5, dtype=torch.int64), torch.tensor([True, False]), torch.randn(3).half(),
              torch.randn(3).bfloat16(), torch.tensor(2.5), 7, 0.5, True, None]
    save_inputs(values, tmp_path / "inputs.pt")
    back = load_inputs(tmp_path / "inputs.pt")
    for a, b in zip(values, back):
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
            assert a.storage_offset() == b.storage_offset() and torch.equal(a, b)
        else:
            assert a == b


class Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_loading_refuses_arbitrary_objects(tmp_path):
    path = tmp_path / "inputs.pt"
    with open(path, "wb") as f:
        torch.save([Evil()], f, pickle_module=pickle)
    with pytest.raises(Exception):
        load_inputs(path)
