# Foreign program: a compiled loss/metric function called inside a data loop over mini-batches of
# varying size (the last batch is short, as with DataLoader(drop_last=False)), modelled on the
# "torch.compile in a training loop" examples and the HuggingFace `compute_metrics` pattern.
# Expected: nothing fails.
import torch
import torch.nn.functional as F


@torch.compile
def batch_metrics(logits, targets):
    loss = F.cross_entropy(logits, targets, label_smoothing=0.1)
    pred = logits.argmax(-1)
    correct = (pred == targets).sum()
    top2 = logits.topk(2, dim=-1).indices
    in_top2 = (top2 == targets[:, None]).any(-1).sum()
    return loss, correct, in_top2


def main():
    torch.manual_seed(0)
    data = torch.randn(70, 6)
    targets = torch.randint(0, 6, (70,))
    total, correct, top2 = 0.0, 0, 0
    for start in range(0, 70, 16):  # batches of 16, 16, 16, 16, 6
        loss, c, t2 = batch_metrics(data[start:start + 16], targets[start:start + 16])
        total += loss.item()
        correct += int(c)
        top2 += int(t2)
    print(f"loss {total:.4f} acc {correct / 70:.3f} top2 {top2 / 70:.3f}")
    return total, correct, top2


if __name__ == "__main__":
    main()
