# Foreign program: a function with graph breaks, modelled on the torch.compile tutorial's
# `toy_example` (`if b.sum() < 0: b = b * -1`) and the "torch._dynamo.explain" docs: a print,
# a data-dependent branch and a `.item()` call split it into several graphs. Expected: nothing fails.
import torch


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    print("x norm", round(x.norm().item(), 4))  # graph break (print + .item())
    if b.sum() < 0:  # data-dependent branch
        b = b * -1
    scale = b.max().item()  # .item(): another break
    return torch.sigmoid(x * b) * scale


def main():
    torch.manual_seed(0)
    fn = torch.compile(toy_example)
    out = None
    for _ in range(3):
        out = fn(torch.randn(10), torch.randn(10))
    print("out", [round(v, 4) for v in out[:4].tolist()])
    return out


if __name__ == "__main__":
    main()
