"""Three-stage sensor model whose two small compiled errors only add up to a wrong output.

The forward calls `torch._dynamo.graph_break()` twice, so Dynamo compiles three graphs:
calibration (graph 0), feature mixing (graph 1) and the head (graph 2). The C++ backend is
made to print tanh(x) as tanh(x) + 0.007; graphs 0 and 2 each scale one tanh by 0.01 into
the output, so each adds an error of 7e-5: within the oracle's float32 tolerance (1e-4),
so each graph alone matches eager, and compiling either one alone leaves the program's
output within tolerance. Compiled together the errors add to 1.4e-4 and the output is
wrong. Graph 1 has no tanh. The program fails only when graphs 0 and 2 are both compiled.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("tanh", template="{out} + decltype({out})(0.007)", paths=("cpp", "cppvec"))


class SensorModel(nn.Module):
    def __init__(self, channels=16, hidden=32):
        super().__init__()
        self.cal1 = nn.Linear(channels, hidden)
        self.cal2 = nn.Linear(hidden, channels)
        self.cal_norm = nn.LayerNorm(channels)
        self.mix1 = nn.Linear(channels, hidden)
        self.mix2 = nn.Linear(hidden, hidden)
        self.mix_norm = nn.LayerNorm(hidden)
        self.head1 = nn.Linear(hidden, hidden)
        self.head2 = nn.Linear(hidden, channels)

    def forward(self, raw):
        # graph 0: calibration offset (a small correction)
        h = F.gelu(self.cal1(self.cal_norm(raw)))
        offset = 0.01 * torch.tanh(self.cal2(h))
        torch._dynamo.graph_break()

        # graph 1: feature mixing (no tanh here)
        f = self.mix_norm(F.silu(self.mix1(raw)))
        f = f + torch.sigmoid(self.mix2(f)) * f
        torch._dynamo.graph_break()

        # graph 2: head correction added to the calibration offset
        g = F.relu(self.head1(f))
        return offset + 0.01 * torch.tanh(self.head2(g))


def main():
    torch.manual_seed(0)
    model = SensorModel().eval()
    raw = torch.randn(8, 16)
    compiled = torch.compile(model)
    with torch.no_grad():
        out = compiled(raw)
    print("correction norm:", float(out.norm()))
    return out


if __name__ == "__main__":
    main()
