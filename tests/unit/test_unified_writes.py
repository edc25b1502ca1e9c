"""compiler/unified_writes.py through the oracle: an input one run writes with the bits it held
and the other leaves alone is no difference (a user kernel's eager write moves no version
counter, a compiled copy-back does); a write of other bits still is one."""
import torch

from compiler.oracle import check, run


def writes_same_bits(x):
    x.relu_()  # x >= 0: the bits it held, the version counter moved
    return x * 2


def leaves_alone(x):
    return x.relu() * 2


def writes_other_bits(x):
    x.add_(1)
    return x.relu() * 2 - 2


def test_a_write_of_the_bits_an_input_held_is_no_difference_from_no_write():
    x = torch.rand(5)
    assert run(writes_same_bits, [x]).rewritten == {"input[0]"} and run(leaves_alone, [x]).rewritten == frozenset()
    assert check(writes_same_bits, [x], leaves_alone).status == "pass"
    assert check(leaves_alone, [x], writes_same_bits).status == "pass"


def test_a_write_of_other_bits_is_still_judged_by_value():
    x = torch.rand(5)
    outcome = check(writes_same_bits, [x], writes_other_bits)
    assert outcome.status == "fail" and outcome.rung == "values" and "input[0]" in outcome.message
