"""A real, open bug: https://github.com/pytorch/pytorch/issues/184002
"[DTensor][Compile] Compile fails when DTensor function returns an aliased output".

A compiled function on a sharded DTensor returns `y` and a view of it (`y[:, :1]`); eager runs,
the compiled call fails on every rank with `RuntimeError: as_strided not supported with DTensor`
(AOTAutograd regenerates the aliased output with as_strided, which DTensor rejects). Still fails
on torch 2.13.0 CPU with gloo: `torchrun --nproc-per-node 2 real_dtensor_alias.py`.
"""
import torch
import torch.distributed as dist
from torch.distributed.tensor import Shard, distribute_tensor, init_device_mesh


def fn(x):
    y = x + 1
    aux = y[:, :1]
    return y, aux


def main():
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    torch.manual_seed(0)
    x = distribute_tensor(torch.randn(8, 4), mesh, [Shard(0)]).requires_grad_()
    y, aux = torch.compile(fn)(x)
    (y.sum() + aux.sum()).backward()
    print(f"rank {dist.get_rank()} grad {x.grad.to_local().sum().item():.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
