"""Two-stage speech model with a graph break; only the second graph fails to compile.

A `torch._dynamo.graph_break()` (standing in for untraceable feature logging) splits the
forward into graph 0 (conv front end, GELU with the tanh approximation, which has no erf)
and graph 1 (a classifier with exact GELU, which Inductor computes through erf). The planted
bug prints erf as `compile error!` in C++ kernels, so graph 0 compiles and graph 1 does not.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("erf", "compile_error", paths=("cpp", "cppvec"))


class SpeechClassifier(nn.Module):
    def __init__(self, mels=20, ch=32, classes=8):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, ch, 3, padding=1)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=1, stride=2)
        self.norm = nn.GroupNorm(4, ch)
        self.fc1 = nn.Linear(ch, 2 * ch)
        self.fc2 = nn.Linear(2 * ch, ch)
        self.ln = nn.LayerNorm(ch)
        self.fc3 = nn.Linear(ch, 2 * ch)
        self.fc4 = nn.Linear(2 * ch, ch)
        self.ln2 = nn.LayerNorm(ch)
        self.out = nn.Linear(ch, classes)

    def forward(self, spec):
        h = F.gelu(self.conv1(spec), approximate="tanh")
        h = F.gelu(self.norm(self.conv2(h)), approximate="tanh")
        torch._dynamo.graph_break()
        h = torch.cat([h.mean(-1), h.amax(-1)], dim=0).reshape(2, -1, h.shape[1]).sum(0)
        h = h + self.fc2(F.gelu(self.fc1(self.ln(h))))  # exact GELU: erf
        h = h + self.fc4(torch.tanh(self.fc3(self.ln2(h))))
        return F.log_softmax(self.out(h), dim=-1)


def main():
    torch.manual_seed(0)
    model = SpeechClassifier().eval()
    spec = torch.randn(3, 20, 50)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(spec)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
