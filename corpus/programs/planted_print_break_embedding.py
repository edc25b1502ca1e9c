"""Program shape: a graph break from `print()` inside the compiled forward, splitting it into a
feature graph (graph 0) and an embedding-lookup graph (graph 1).

Plant: the C++ code generators' indirect loads read row (i + 1) mod size
(`plant("indexing:off_by_one@cpp,cppvec")`). Only graph 1 indexes (the embedding lookup).
Expected answer: exit 0, a verified repro of Dynamo graph 1 (of 2), kind accuracy, stage
inductor, culprit op embedding.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("indexing:off_by_one@cpp,cppvec")


class Recommender(nn.Module):
    def __init__(self, users=50, d=16):
        super().__init__()
        self.features = nn.Linear(8, d)
        self.users = nn.Embedding(users, d)

    def forward(self, context, user_ids):
        h = torch.relu(self.features(context))
        print("context features ready:", tuple(h.shape))  # a debugging print: graph break
        return (h * self.users(user_ids)).sum(-1)


def main():
    torch.manual_seed(0)
    model = Recommender().eval()
    compiled = torch.compile(model)
    context = torch.randn(10, 8)
    user_ids = torch.randint(0, 50, (10,))
    with torch.no_grad():
        scores = compiled(context, user_ids)
    print("scores", [round(s, 4) for s in scores.tolist()])
    return scores


if __name__ == "__main__":
    main()
