"""Feature hashing for a click model; vectorized C++ prints integer floor division off by one.

Categorical ids (int64) are hashed into buckets with shifts, xor and floor division. The
planted bug adds one to every vectorized integer floordiv (`cppvec`), so the returned int64
bucket ids are wrong (an exact mismatch) and so are the float features derived from them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("floordiv", "accuracy", form="add_one", paths=("cppvec",))


class HashedClickModel(nn.Module):
    def __init__(self, fields=6, buckets=1024, hidden=32):
        super().__init__()
        self.buckets = buckets
        self.fc1 = nn.Linear(3 * fields, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, 1)

    def forward(self, ids, dense):
        mixed = ids ^ (ids >> 7)
        buckets = (mixed // 13) % self.buckets  # int64 bucket per field
        position = buckets.float() / self.buckets
        parity = (buckets & 1).float()
        h = F.gelu(self.norm1(self.fc1(torch.cat([position, parity, dense], dim=-1))))
        h = h + torch.tanh(self.norm2(self.fc2(h)))
        return buckets, torch.sigmoid(self.fc3(h)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = HashedClickModel().eval()
    ids = torch.randint(0, 2**40, (128, 6))
    dense = torch.randn(128, 6)
    compiled = torch.compile(model)
    with torch.no_grad():
        buckets, ctr = compiled(ids, dense)
    print("buckets[0]:", buckets[0].tolist(), "ctr[:3]:", ctr[:3])


if __name__ == "__main__":
    main()
