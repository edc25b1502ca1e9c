# Foreign program: fullgraph=True together with dynamic shapes: one model compiled with
# `dynamic=True`, another with `fullgraph=True` whose input is marked with
# `torch._dynamo.mark_dynamic`, each called with several sequence lengths (recompiles or a dynamic
# graph), modelled on the PyTorch "Dynamic shapes" docs and the torch.compile FAQ. Expected:
# nothing fails.
import torch
import torch.nn as nn


class Pooler(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        h = torch.relu(self.proj(self.norm(x)))
        weights = torch.softmax(h.sum(-1), dim=-1)
        return (weights.unsqueeze(-1) * h).sum(1)


def main():
    torch.manual_seed(0)
    model = Pooler().eval()
    dyn = torch.compile(model, dynamic=True)
    full = torch.compile(model, fullgraph=True)
    results = []
    with torch.no_grad():
        for seq in (5, 9, 17):
            x = torch.randn(2, seq, 16)
            results.append(dyn(x))
            x2 = torch.randn(3, seq, 16)
            torch._dynamo.mark_dynamic(x2, 1)
            results.append(full(x2))
    print("sums", [round(r.sum().item(), 4) for r in results])
    return results


if __name__ == "__main__":
    main()
