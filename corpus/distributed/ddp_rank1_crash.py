"""A 2-rank DDP conv net where only rank 1 sets Inductor's relu test knob to "runtime_error":
its kernel throws inside an OpenMP region, which aborts the process; rank 0 then waits in the gradient all-reduce until torchrun ends it.
Run: torchrun --nproc-per-node 2 ddp_rank1_crash.py
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.sigmoid(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.head(x.mean(dim=(2, 3)))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(2)  # torchrun sets 1: with 2, Inductor's kernels run in OpenMP regions
    if rank == 1:
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
    torch.manual_seed(0)
    ddp = DDP(torch.compile(ConvNet()))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = ddp(torch.randn(4, 3, 8, 8)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
