# Foreign program: a training loop whose forward+backward runs through a compiled model and whose
# optimizer step is compiled too, modelled on the PyTorch recipe "(beta) Compiling the optimizer
# with torch.compile" (`@torch.compile(fullgraph=False) def fn(): opt.step()`) and the
# torch.compile tutorial's training example. Expected: nothing fails.
import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    compiled = torch.compile(model)

    @torch.compile(fullgraph=False)
    def opt_step():
        opt.step()

    x = torch.randn(32, 16)
    y = torch.randint(0, 4, (32,))
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(compiled(x), y)
        loss.backward()
        opt_step()
        losses.append(round(loss.item(), 4))
    print("losses", losses)
    return [p.detach() for p in model.parameters()]


if __name__ == "__main__":
    main()
