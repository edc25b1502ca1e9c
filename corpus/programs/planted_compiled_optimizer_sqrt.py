"""Program shape: a training loop with a compiled model and a compiled optimizer step
(`torch.compile(opt.step)`, the "Compiling the optimizer" recipe), Adam, 3 steps.

Plant: the vectorized C++ sqrt throws a std::runtime_error
(`inject_bug("sqrt", "runtime_error", paths=("cppvec",))`). Only Adam's update takes a square
root, so the failing graph is the optimizer step's (Dynamo graph 1), not the model's forward or
backward.
Expected answer: exit 0, a verified repro of Dynamo graph 1 (of 2), kind runtime_error, stage
inductor, culprit op sqrt (Adam's foreach sqrt).
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("sqrt", "runtime_error", paths=("cppvec",))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    compiled_model = torch.compile(model)

    @torch.compile
    def step():
        opt.step()

    x, y = torch.randn(16, 32), torch.randn(16, 16)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(compiled_model(x), y)
        loss.backward()
        step()
        losses.append(loss.item())
    print("losses", [round(v, 4) for v in losses])
    return [p.detach() for p in model.parameters()]


if __name__ == "__main__":
    main()
