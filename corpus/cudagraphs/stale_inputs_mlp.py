"""CUDA MLP compiled with mode="reduce-overhead"; cudagraph trees run on stale inputs.

The bug lives in CUDA graphs, not in Inductor's code: the call's inputs are never copied into
the recorded graph's static input buffers (`plant("cudagraphs:stale_inputs")`,
compiler/inject_cudagraphs.py). The first call (a warm-up, no CUDA graph) is right; the later
batches get wrong classes. Inductor without CUDA graphs is right, and a graph checked only at
its first call shows nothing. Needs a CUDA GPU.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("cudagraphs:stale_inputs")


class MLP(nn.Module):
    def __init__(self, dim=64, hidden=128, classes=10):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, classes)

    def forward(self, x):
        return F.log_softmax(self.down(F.gelu(self.up(self.norm(x)))), dim=-1)


def main():
    torch.manual_seed(0)
    model = MLP().cuda().eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    batches = [torch.randn(32, 64, device="cuda") for _ in range(4)]
    with torch.no_grad():
        for step, x in enumerate(batches):
            out = compiled(x)
            print(f"step {step}: predicted classes {out.argmax(-1)[:8].tolist()}")


if __name__ == "__main__":
    main()
