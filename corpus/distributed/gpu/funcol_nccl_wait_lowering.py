"""A compiled step holding a functional all_reduce over NCCL on 2 GPUs; minify plants a wrong
lowering of the collective's wait (`--inject lowering:_c10d_functional.wait_tensor:accuracy:double`:
the reduced value doubled). The collective itself is the bug, so the repro runs on 2 ranks (NCCL).
Run: torchrun --nproc-per-node 2 funcol_nccl_wait_lowering.py   (needs 2 CUDA devices)
"""
import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x, w):
    h = torch.sin(x @ w)
    s = funcol.all_reduce(h, "sum", dist.group.WORLD)
    return torch.cos(s) + h


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank = dist.get_rank()
    torch.manual_seed(rank)
    out = torch.compile(step)(torch.randn(8, 16, device="cuda"), torch.randn(16, 16, device="cuda"))
    print(f"rank {rank} {out.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
