"""A 2-rank DDP model whose planted bug fires on rank 1 only, by its data: C++ codegen prints
abs(x) as trunc(abs(x)). Rank 0 trains on integer-valued features (counts), where truncation
changes nothing; rank 1's features are fractional, so only rank 1's graph differs from eager.
Run: torchrun --nproc-per-node 2 ddp_rank1_data_truncate.py
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from compiler.inject import inject_bug

inject_bug("abs", "accuracy", form="truncate", paths=("cpp", "cppvec"))


class CountModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 512)
        self.hidden = nn.Linear(512, 512)
        self.head = nn.Linear(512, 4)

    def forward(self, x):
        h = torch.log1p(x.abs())  # magnitudes of signed counts
        return self.head(torch.tanh(self.hidden(torch.tanh(self.proj(h)))))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    ddp = DDP(torch.compile(CountModel()), bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        x = torch.randint(-5, 6, (8, 16)).float() if rank == 0 else torch.randn(8, 16) * 3
        loss = ddp(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
