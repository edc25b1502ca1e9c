"""Program shape: the `@torch.compile` decorator on a plain loss function (smooth L1 / Huber).

Plant: the C++ code generators print abs(x) as -abs(x)
(`inject_bug("abs", "accuracy", form="negate", paths=("cpp", "cppvec"))`).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op abs.
"""
import torch

from compiler.inject import inject_bug

inject_bug("abs", "accuracy", form="negate", paths=("cpp", "cppvec"))


@torch.compile
def huber(pred, target, delta: float = 1.0):
    err = (pred - target).abs()
    quadratic = 0.5 * err * err
    linear = delta * (err - 0.5 * delta)
    return torch.where(err < delta, quadratic, linear).mean(-1)


def main():
    torch.manual_seed(0)
    pred = torch.randn(6, 32)
    target = pred + 1.5 * torch.randn(6, 32)
    loss = huber(pred, target)
    print("loss", [round(v, 4) for v in loss.tolist()])
    return loss


if __name__ == "__main__":
    main()
