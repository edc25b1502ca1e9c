"""Which torch.compile calls turn CUDA graphs on, the rung without them, and the calls before the judged
one (compiler/cudagraphs.py): no GPU needed."""
import torch

from compiler.cudagraphs import checked_call, checks_call, obeying, priming_inputs, uses_cudagraphs, without_cudagraphs
from compiler.judging import Judging
from compiler.oracle import judged_check
from compiler.stages import CompileSpec


def test_modes_options_and_config_that_turn_cuda_graphs_on():
    assert uses_cudagraphs(CompileSpec(mode="reduce-overhead")) and uses_cudagraphs(CompileSpec(mode="max-autotune"))
    assert not uses_cudagraphs(CompileSpec()) and not uses_cudagraphs(CompileSpec(mode="max-autotune-no-cudagraphs"))
    assert uses_cudagraphs(CompileSpec(options={"triton.cudagraphs": True}))
    assert uses_cudagraphs(CompileSpec(config={"triton.cudagraphs": True}))
    assert not uses_cudagraphs(CompileSpec(mode="reduce-overhead", config={"triton.cudagraphs": False}))


def test_the_rung_without_cuda_graphs_changes_nothing_else():
    assert without_cudagraphs(CompileSpec(mode="reduce-overhead", dynamic=True)) == CompileSpec(dynamic=True)
    assert without_cudagraphs(CompileSpec(mode="max-autotune")).mode == "max-autotune-no-cudagraphs"
    spec = without_cudagraphs(CompileSpec(options={"triton.cudagraphs": True, "max_autotune": True}))
    assert spec.options == {"triton.cudagraphs": False, "max_autotune": True} and not uses_cudagraphs(spec)
    assert not uses_cudagraphs(without_cudagraphs(CompileSpec(config={"triton.cudagraphs": True})))


def test_a_blame_flip_of_cuda_graphs_overrides_the_mode():
    kwargs = {"backend": "inductor", "mode": "reduce-overhead"}
    assert obeying(kwargs, {"triton.cudagraphs": False}) == {"backend": "inductor"}
    assert obeying(kwargs, {"fallback_random": True}) == kwargs and obeying(kwargs, None) == kwargs


def test_only_later_calls_on_cuda_inputs_under_cuda_graphs_are_checked():
    spec = CompileSpec(mode="reduce-overhead").to_dict()
    cpu = (torch.ones(2),)
    assert not checks_call(spec, 2, cpu)  # no CUDA graph runs on CPU inputs
    assert not checks_call(CompileSpec().to_dict(), 2, cpu) and not checks_call(spec, 1, cpu)


def test_priming_inputs_keep_each_inputs_kind():
    """A Parameter stays one: Dynamo guards on the class, and another graph would warm up afresh."""
    x = torch.randn(3, 4).t().requires_grad_()
    ids = torch.tensor([2, 0, 1])
    weight = torch.nn.Parameter(torch.randn(2, 2))
    zx, zi, zw, n = priming_inputs([x, ids, weight, 3])
    assert zx.stride() == x.stride() and zx.requires_grad and not zx.any()
    assert zi.dtype == torch.int64 and not zi.any() and n == 3
    assert type(zw) is torch.nn.Parameter and zw.requires_grad and not zw.any() and weight.any()
    assert x.any() and ids.any()  # the inputs themselves are untouched


def test_a_later_calls_stand_in_makes_the_writes_the_call_made():
    """A graph that writes into an input (running statistics): judged against eager, the stand-in for
    the call must write what the call wrote, or every such graph would seem to fail."""
    def step(x, running):
        running.mul_(0.9).add_(x.mean() * 0.1)
        return (x * 2,)

    args = (torch.arange(4.0), torch.zeros(()))
    verdicts = []
    out = checked_call(step, args, lambda before, stand_in: verdicts.append(
        judged_check(step, before, stand_in, "inductor", Judging())))
    assert verdicts[0].status == "pass", verdicts[0]
    assert out[0].tolist() == [0.0, 2.0, 4.0, 6.0] and abs(float(args[1]) - 0.15) < 1e-6

    def wrong(x, running):  # writes the wrong value: the check must see it
        running.add_(1.0)
        return (x * 2,)

    verdicts.clear()
    checked_call(wrong, (torch.arange(4.0), torch.zeros(())), lambda before, stand_in: verdicts.append(
        judged_check(step, before, stand_in, "inductor", Judging())))
    assert verdicts[0].status == "fail", verdicts[0]
