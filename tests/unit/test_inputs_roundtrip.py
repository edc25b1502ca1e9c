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


def _kinds():
    c = torch.randn(4, dtype=torch.complex64)
    base = torch.arange(12, dtype=torch.float32)
    return {
        "zero": torch._efficientzerotensor((2, 3), dtype=torch.float32),
        "zero_grad": torch._efficientzerotensor((3,), dtype=torch.float64).requires_grad_(),
        "conj": c.conj(),
        "neg": torch._neg_view(torch.randn(3)),
        "neg_conj": torch._neg_view(c.conj()),
        "expanded": torch.randn(3, 1).expand(3, 4),
        "overlapping": base.as_strided((4, 3), (1, 1)),
        "offset": base[5:],
        "requires_grad": torch.randn(3, requires_grad=True),
        "parameter": torch.nn.Parameter(torch.randn(2, 2)),
    }


def _same_kind(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
    assert a._is_zerotensor() == b._is_zerotensor() and a.is_neg() == b.is_neg()
    assert (a.is_complex() and a.is_conj()) == (b.is_complex() and b.is_conj())
    if not a._is_zerotensor():
        assert a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
    assert torch.equal(a.detach().resolve_conj().resolve_neg(), b.detach().resolve_conj().resolve_neg())


@pytest.mark.parametrize("kind", list(_kinds()))
def test_each_kind_of_tensor_round_trips_as_the_same_kind(kind, tmp_path):
    """Saved and loaded with weights_only=True (what the capture and the workers do), and copied
    as the oracle copies inputs: each comes back the same kind of tensor with the same values."""
    from compiler.oracle import clone_input

    value = _kinds()[kind]
    save_inputs([value], tmp_path / "inputs.pt")
    _same_kind(value, load_inputs(tmp_path / "inputs.pt")[0])
    _same_kind(value, clone_input(value))


def test_a_zero_tensor_input_is_rebuilt_in_the_repro_source():
    from repro.inputs import plan_inputs

    zero = torch._efficientzerotensor((3,), dtype=torch.float32)
    plan = plan_inputs([zero, torch.ones(2)], ["grad", "x"], "inputs.pt")
    assert "grad = torch._efficientzerotensor((3,), dtype=torch.float32, device=device)" in plan.source
    namespace = {"torch": torch}
    exec(plan.source, namespace)
    grad, x = namespace["make_inputs"]("cpu")
    assert grad._is_zerotensor() and torch.equal(x, torch.ones(2))


def _layouts():
    return {
        "sparse_coo": torch.randn(3, 4).to_sparse(),
        "sparse_csr": torch.randn(3, 4).to_sparse_csr(),
        "quantized": torch.quantize_per_tensor(torch.randn(4), 0.1, 3, torch.quint8),
        "nested": torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)]),
        "complex": torch.randn(3, dtype=torch.complex64),
    }


@pytest.mark.parametrize("kind", list(_layouts()))
def test_sparse_quantized_nested_and_complex_inputs_round_trip(kind, tmp_path):
    t = _layouts()[kind]
    save_inputs([t, 3, 2.5], tmp_path / "inputs.pt")
    back, number, real = load_inputs(tmp_path / "inputs.pt")
    assert (number, real) == (3, 2.5)
    assert type(back) is type(t) and back.layout == t.layout and back.dtype == t.dtype
    assert back.is_nested or back.shape == t.shape  # a nested tensor has no single shape
    if t.is_quantized:
        assert (back.q_scale(), back.q_zero_point()) == (t.q_scale(), t.q_zero_point())
        assert torch.equal(back.int_repr(), t.int_repr())
    elif t.is_nested:
        assert all(torch.equal(a, b) for a, b in zip(back.unbind(), t.unbind()))
    else:
        assert torch.equal(back.to_dense(), t.to_dense())
