"""A compiled step holding a functional all_reduce (sum); minify plants a wrong Inductor pass,
`--inject postgrad:all_reduce:max`: a post-grad pass that makes the all_reduce's reduce op max.
The collective itself is the bug: replaced by its recorded result it is gone, so the repro runs
on 2 ranks and carries the planted pass.
Run: torchrun --nproc-per-node 2 funcol_postgrad_all_reduce.py
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x, w):
    h = torch.sin(x @ w)
    s = funcol.all_reduce(h, "sum", dist.group.WORLD)
    return torch.cos(s) + h


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    out = torch.compile(step)(torch.randn(8, 16), torch.randn(16, 16))
    print(f"rank {rank} {out.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
