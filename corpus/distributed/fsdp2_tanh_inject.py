"""A 2-rank FSDP2 model (fully_shard on each block and on the root, the root compiled) with no
bug of its own: minify plants one on one rank,
`minify --inject rank=1:tanh:accuracy:double torchrun --nproc-per-node 2 fsdp2_tanh_inject.py`
(C++ codegen prints tanh(x) as 2 * tanh(x) on rank 1 only). CPU, gloo.

The blocks have a forward of their own: FSDP2's hooks are never traced (`_dynamo_disable`), so
compiling the root breaks the graph at its hook and Dynamo compiles the frames beneath it; a
plain nn.Sequential of nn.Linear would leave only torch.nn frames, which Dynamo does not compile.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import fully_shard


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.tanh(self.up(x)))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), Block(64), Block(64), nn.Linear(64, 8))
    for block in model[1:3]:
        fully_shard(block)
    fully_shard(model)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1 + rank)
    for _ in range(2):
        loss = compiled(torch.randn(4, 16)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank} loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
