"""Bad input: the ranks cannot meet (the script names a rendezvous address that does not exist),
with or without torch.compile (minify exits 2 and says so).
Run: torchrun --nproc-per-node 2 ddp_bad_rendezvous.py
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", init_method="tcp://256.1.1.1:29500", rank=int(os.environ["RANK"]),
                            world_size=int(os.environ["WORLD_SIZE"]), timeout=timedelta(seconds=10))
    print(torch.compile(torch.sin)(torch.ones(2)))


if __name__ == "__main__":
    main()
