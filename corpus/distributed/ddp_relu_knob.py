"""A 2-rank DDP MLP whose compiled pieces (DDPOptimizer splits the graph at the gradient
buckets) hold Inductor's own relu bug: `inject_relu_bug_TESTING_ONLY = "accuracy"` prints
relu(x) as x + 1 in C++. Every rank computes wrong activations; the graph holds no collective.
Run: torchrun --nproc-per-node 2 ddp_relu_knob.py
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 512), nn.Tanh(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8))
    ddp = DDP(torch.compile(model), bucket_cap_mb=1)  # two buckets: two compiled pieces
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
