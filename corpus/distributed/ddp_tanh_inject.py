"""A 2-rank DDP MLP with no bug of its own: minify plants one on one rank,
`minify --inject rank=1:tanh:accuracy:double torchrun --nproc-per-node 2 ddp_tanh_inject.py`
(C++ codegen prints tanh(x) as 2 * tanh(x) on rank 1 only).
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 512), nn.GELU(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 8))
    ddp = DDP(torch.compile(model), bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = ddp(torch.randn(4, 16)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
