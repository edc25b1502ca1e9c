"""Beam re-ranking with gather; C++ indirect loads always read element 0.

Candidate scores are picked with torch.gather at the beam indices. The planted bug makes
every indirect index read element 0 of its row (`first`) in C++ kernels, so all gathered
scores are the first candidate's and the re-ranking is wrong.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("indexing:first@cpp,cppvec")


class Reranker(nn.Module):
    def __init__(self, dim=24, hidden=48):
        super().__init__()
        self.score = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.norm = nn.LayerNorm(dim)
        self.mix = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.prior = nn.Linear(dim, 1)

    def forward(self, candidates, beams):  # candidates (b, n, d), beams (b, k) int64
        h = self.norm(candidates)
        h = h + F.gelu(self.mix(self.norm2(h)))
        scores = self.score(h).squeeze(-1) + self.prior(h).squeeze(-1)
        log_probs = F.log_softmax(scores, dim=-1)
        picked = torch.gather(log_probs, 1, beams)  # (b, k)
        return picked, picked.logsumexp(-1)


def main():
    torch.manual_seed(0)
    model = Reranker().eval()
    candidates = torch.randn(6, 30, 24)
    beams = torch.randint(0, 30, (6, 5))
    compiled = torch.compile(model)
    with torch.no_grad():
        picked, total = compiled(candidates, beams)
    print("beam log-probs[0]:", picked[0])


if __name__ == "__main__":
    main()
