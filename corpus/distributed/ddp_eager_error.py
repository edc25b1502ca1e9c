"""Bad input, not a compiler bug: rank 1 feeds the model a batch of the wrong width, which fails
with or without torch.compile (minify exits 2 and says so).
Run: torchrun --nproc-per-node 2 ddp_eager_error.py
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    ddp = DDP(torch.compile(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))))
    x = torch.randn(4, 16 if rank == 0 else 17)
    ddp(x).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
