"""Two-tower recommender; C++ indirect loads read the next row (off-by-one index).

User and item ids index embedding tables. The planted bug shifts every indirect index by
one (modulo the table size) in C++ kernels, so each lookup returns the neighbouring row:
always in bounds, never a crash, just wrong scores.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("indexing:off_by_one@cpp,cppvec")


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
        return (u[:, None, :] * v).sum(-1) * 10.0  # (users, candidate items)


def main():
    torch.manual_seed(0)
    model = TwoTower().eval()
    user_ids = torch.randint(0, 200, (16,))
    item_ids = torch.randint(0, 500, (16, 20))
    compiled = torch.compile(model)
    with torch.no_grad():
        scores = compiled(user_ids, item_ids)
    print("top item per user:", scores.argmax(-1)[:8].tolist())


if __name__ == "__main__":
    main()
