"""Tabular MLP with feature embeddings, compiled with Inductor's own relu bug: runtime crash.

`torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"` makes the C++
backend print relu as `x; throw 1`. The kernel compiles, but the C++ exception thrown while
it runs cannot be caught by Python: the process aborts (SIGABRT). The model has exactly one
torch.relu; its other activations are GELU, tanh and sigmoid, which do not lower to relu.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class TabularMLP(nn.Module):
    def __init__(self, num_numeric=12, vocab=50, emb=8, hidden=64):
        super().__init__()
        self.category_emb = nn.Embedding(vocab, emb)
        self.input_norm = nn.LayerNorm(num_numeric)
        self.fc1 = nn.Linear(num_numeric + 2 * emb, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.gate = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, numeric, categories):
        # categories: (batch, 2) integer ids, embedded and concatenated with the numbers
        emb = self.category_emb(categories).flatten(1)
        x = torch.cat([self.input_norm(numeric), emb], dim=1)
        h = F.gelu(self.ln1(self.fc1(x)))
        # gated residual block; its middle activation is the model's one relu
        g = torch.relu(self.ln2(self.fc2(h)))
        h = h + g * torch.sigmoid(self.gate(h))
        h = torch.tanh(h) * 0.5 + h.clamp(-3.0, 3.0) * 0.5
        return self.out(h).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = TabularMLP().eval()
    numeric = torch.randn(32, 12)
    categories = torch.randint(50, (32, 2))

    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(3):
            pred = compiled(numeric, categories)
    print("predictions:", pred[:4])


if __name__ == "__main__":
    main()
