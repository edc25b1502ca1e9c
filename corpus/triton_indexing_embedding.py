"""CUDA two-tower recommender; Triton indirect loads read the next row (off-by-one index).

Needs a CUDA GPU. Same model and bug as the CPU case indexing_embedding_recsys, on the
Triton path.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("indexing:off_by_one@triton")


class TwoTower(nn.Module):
    def __init__(self, users=200, items=500, dim=32):
        super().__init__()
        self.user_emb = nn.Embedding(users, dim)
        self.item_emb = nn.Embedding(items, dim)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.item_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, user_ids, item_ids):
        u = F.normalize(self.user_mlp(self.user_emb(user_ids)), dim=-1)
        v = F.normalize(self.norm(self.item_mlp(self.item_emb(item_ids))), dim=-1)
        return (u[:, None, :] * v).sum(-1) * 10.0


def main():
    torch.manual_seed(0)
    model = TwoTower().cuda().eval()
    user_ids = torch.randint(0, 200, (16,), device="cuda")
    item_ids = torch.randint(0, 500, (16, 20), device="cuda")
    compiled = torch.compile(model)
    with torch.no_grad():
        scores = compiled(user_ids, item_ids)
    print("top item per user:", scores.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
