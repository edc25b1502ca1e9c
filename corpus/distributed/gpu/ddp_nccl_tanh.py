"""A 2-GPU DDP MLP over NCCL with no bug of its own: minify plants one on rank 1,
`minify --inject rank=1:tanh:accuracy:double torchrun --nproc-per-node 2 ddp_nccl_tanh.py`
(Triton codegen prints tanh(x) as 2 * tanh(x) on rank 1 only). Needs 2 CUDA devices.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 512), nn.Tanh(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8)).cuda()
    ddp = DDP(torch.compile(model), device_ids=[local], bucket_cap_mb=1)  # two buckets: two compiled pieces
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = ddp(torch.randn(4, 16, device="cuda")).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
