# Foreign program: CPU mixed-precision inference with `torch.autocast("cpu", dtype=torch.bfloat16)`
# around a compiled MLP classifier, modelled on the PyTorch "Automatic Mixed Precision" recipe (CPU
# section) and Intel's IPEX/Inductor bf16 examples. Expected: nothing fails (bf16 rounding
# differences between eager and compiled should be judged as numerics, not a bug).
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 10)
    ).eval()
    compiled = torch.compile(model)
    x = torch.randn(8, 32)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        logits = compiled(x)
        probs = logits.float().softmax(-1)
    print("dtype", logits.dtype, "pred", probs.argmax(-1).tolist())
    return logits


if __name__ == "__main__":
    main()
