"""A 2-rank DDP gated MLP (GLU-style) with a planted wrong lowering of sigmoid (it negates),
inside one of the pieces DDPOptimizer splits the compiled graph into. Every rank is wrong.
Run: torchrun --nproc-per-node 2 ddp_lowering_sigmoid.py
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from compiler.inject import plant

plant("lowering:sigmoid:accuracy:negate")


class GatedMLP(nn.Module):
    def __init__(self, dim=16, hidden=384):
        super().__init__()
        self.up = nn.Linear(dim, 2 * hidden)
        self.mid = nn.Linear(hidden, hidden)
        self.down = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        a, b = self.up(self.norm(x)).chunk(2, dim=-1)
        h = self.mid(a * torch.sigmoid(b))
        return x + self.down(torch.tanh(h))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    ddp = DDP(torch.compile(GatedMLP()), bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = ddp(torch.randn(8, 16)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
