"""A 2-rank DDP training job with compiled autograd on (and DDP's python reducer, so the
gradient all-reduces are functional collectives traced into the compiled backward graph); no
bug of its own: minify plants one on one rank,
`minify --inject rank=1:tanh:accuracy:double torchrun --nproc-per-node 2 compiled_autograd_ddp.py`
(tanh is in the forward, and its output in the backward's tanh_backward).
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    torch._dynamo.config.compiled_autograd = True
    torch._dynamo.config.optimize_ddp = "python_reducer"
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 8))
    ddp = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile
    def step(x):
        loss = ddp(x).square().mean()
        loss.backward()
        return loss

    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = step(torch.randn(4, 16))
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
