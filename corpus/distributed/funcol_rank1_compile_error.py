"""A compiled step holding a functional all_reduce; minify plants a lowering of tanh that cannot
be lowered on rank 1 only (`--inject rank=1:lowering:tanh:compile_error`): rank 1's compile fails
while rank 0 waits for it in the all_reduce.
Run: torchrun --nproc-per-node 2 funcol_rank1_compile_error.py
"""
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x, w):
    h = torch.tanh(x @ w)
    s = funcol.all_reduce(h, "sum", dist.group.WORLD)
    return torch.sigmoid(s) + h


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    out = torch.compile(step)(torch.randn(8, 16), torch.randn(16, 16))
    print(f"rank {rank} {out.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
