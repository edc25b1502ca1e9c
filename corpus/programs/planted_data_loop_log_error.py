"""Program shape: a compiled metric function called inside a data loop over mini-batches (the last
batch is short, so Dynamo recompiles for its shape).

Plant: the scalar C++ log executes `throw 1` (`inject_bug("log", "runtime_error", paths=("cpp",))`).
The metric ends in a 0-d log-perplexity, which Inductor prints with the scalar code generator, so
the first batch's graph raises RuntimeError when its kernel runs.
Expected answer: exit 0, a verified repro of Dynamo graph 0, kind runtime_error, stage inductor,
culprit op log.
"""
import torch

from compiler.inject import inject_bug

inject_bug("log", "runtime_error", paths=("cpp",))


@torch.compile
def batch_metrics(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    picked = probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    accuracy = (logits.argmax(-1) == targets).float().mean()
    log_ppl = -torch.log(picked.mean() + 1e-6)  # 0-d from here on
    return accuracy, log_ppl


def main():
    torch.manual_seed(0)
    logits = torch.randn(70, 12)
    targets = torch.randint(0, 12, (70,))
    results = []
    for start in range(0, 70, 32):  # batches of 32, 32, 6
        acc, log_ppl = batch_metrics(logits[start:start + 32], targets[start:start + 32])
        results.append((acc.item(), log_ppl.item()))
    print("metrics", [(round(a, 3), round(p, 3)) for a, p in results])
    return results


if __name__ == "__main__":
    main()
