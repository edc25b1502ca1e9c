"""Program shape: `torch.compile(model, mode="reduce-overhead")` on CPU (CUDA graphs do not
apply on CPU; the mode still sets its Inductor options).

Plant: Inductor's own test knob `torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY =
"compile_error"`: the C++ kernel with relu fails to build (CppCompileError).
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind compile_error, stage
inductor, culprit op relu.
"""
import torch
import torch.nn as nn

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


class Scorer(nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(self.norm(x)))).log_softmax(-1)


def main():
    torch.manual_seed(0)
    model = Scorer().eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(16, 32)
    with torch.no_grad():
        for _ in range(3):
            y = compiled(x)
    print("argmax", y.argmax(-1).tolist())
    return y


if __name__ == "__main__":
    main()
