"""Heteroscedastic regression (Gaussian NLL); a C++ bug only when exp and div share a kernel.

The model predicts a mean and a log-scale; the loss divides the residual by exp(log_scale).
The planted bug prints that division as 2*(a/b) only when an operand was computed by exp in
the same kernel, which is the case here. A repro needs exp and div together: fed the scale
as an input, the division alone is printed correctly.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("fusion:exp+truediv:accuracy:double@cpp,cppvec")


class GaussianRegressor(nn.Module):
    def __init__(self, features=16, hidden=48):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.mean = nn.Linear(hidden, 1)
        self.log_scale = nn.Linear(hidden, 1)

    def forward(self, x, y):
        h = F.gelu(self.norm1(self.fc1(x)))
        h = h + torch.tanh(self.norm2(self.fc2(h)))
        mu = self.mean(h).squeeze(-1)
        log_scale = self.log_scale(h).squeeze(-1).clamp(-5.0, 5.0)
        z = (y - mu) / torch.exp(log_scale)  # standardized residual
        nll = 0.5 * z * z + log_scale + 0.5 * math.log(2 * math.pi)
        return nll.mean(), z


def main():
    torch.manual_seed(0)
    model = GaussianRegressor().eval()
    x, y = torch.randn(40, 16), torch.randn(40)
    compiled = torch.compile(model)
    with torch.no_grad():
        nll, z = compiled(x, y)
    print("nll:", float(nll), "z[:4]:", z[:4])


if __name__ == "__main__":
    main()
