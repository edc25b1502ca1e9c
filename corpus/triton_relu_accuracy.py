"""CUDA gated MLP with Inductor's own Triton relu bug: accuracy.

`torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"` makes the Triton backend
print relu wrongly (compile_error: text Triton cannot parse; runtime_error: a device-side
assert that fires for any non-zero input; accuracy: relu(x) printed as `x + 1`). The model has
exactly one torch.relu; its other activations are GELU, SiLU and sigmoid. Needs a CUDA GPU.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"


class GatedMLP(nn.Module):
    def __init__(self, dim=64, hidden=128, classes=10):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.gate = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mid = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.norm(x)
        h = F.gelu(self.up(h)) * torch.sigmoid(self.gate(h))
        x = x + self.down(h)
        # the model's one relu
        x = x + self.mid(torch.relu(self.norm2(x)))
        return F.log_softmax(self.head(F.silu(x)), dim=-1)


def main():
    torch.manual_seed(0)
    model = GatedMLP().cuda().eval()
    x = torch.randn(32, 64, device="cuda")
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(x)
    print("log-probs[0]:", out[0])


if __name__ == "__main__":
    main()
