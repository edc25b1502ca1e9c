"""A compiled step holding a functional all_reduce (torch.distributed._functional_collectives),
with Inductor's relu test knob (accuracy) on every rank: the wrong relu is summed across ranks.
The collective is replaced by its recorded result, so the repro runs on one process.
Run: torchrun --nproc-per-node 2 funcol_relu_knob.py
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x, w):
    h = torch.relu(x @ w)
    s = funcol.all_reduce(h, "sum", dist.group.WORLD)
    return torch.tanh(s) * 2 + 1


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
    torch.manual_seed(rank)
    out = torch.compile(step)(torch.randn(8, 16), torch.randn(16, 16))
    print(f"rank {rank} {out.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
