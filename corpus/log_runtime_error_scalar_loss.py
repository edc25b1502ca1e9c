"""Contrastive embedding loss; a scalar C++ kernel throws while computing log.

The compiled function returns a scalar loss. Its last steps work on 0-d tensors, which
Inductor prints with the scalar C++ code generator (`cpp`), where the planted bug makes log
execute `throw 1`. Outside a parallel region the throw reaches Inductor's kernel binding,
which raises RuntimeError("unhandled error") in Python (compare log1p_crash_strided_scalar,
where the same throw inside an OpenMP region aborts the process).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("log", "runtime_error", paths=("cpp",))


class ContrastiveLoss(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.proj = nn.Linear(hidden, 16)
        self.log_temperature = nn.Parameter(torch.tensor(-2.0))

    def forward(self, anchors, positives):
        a = F.normalize(self.proj(self.encoder(anchors)), dim=-1)
        p = F.normalize(self.proj(self.encoder(positives)), dim=-1)
        logits = a @ p.t() * torch.exp(-self.log_temperature)
        probs = torch.softmax(logits, dim=-1)
        hit = probs.diagonal().mean()  # 0-d from here on
        return -torch.log(hit + 1e-6) + 0.01 * self.log_temperature.square()


def main():
    torch.manual_seed(0)
    loss_fn = ContrastiveLoss().eval()
    anchors = torch.randn(16, 32)
    positives = anchors + 0.1 * torch.randn(16, 32)
    compiled = torch.compile(loss_fn)
    with torch.no_grad():
        loss = compiled(anchors, positives)
    print("loss:", float(loss))


if __name__ == "__main__":
    main()
