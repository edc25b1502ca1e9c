"""bfloat16 diffusion-style denoiser MLP; C++ code prints sin(x) as sin(x) + 1.

The sinusoidal timestep embedding (sin and cos of scaled timesteps) feeds an MLP that runs
in bfloat16. The planted bug adds one to every sin in C++ kernels (scalar and vectorized),
so the embedding and the predicted noise are wrong.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("sin", "accuracy", form="add_one", paths=("cpp", "cppvec"))


class TimestepDenoiser(nn.Module):
    def __init__(self, data_dim=16, emb_dim=32, hidden=96):
        super().__init__()
        half = emb_dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))
        self.t_proj = nn.Linear(emb_dim, hidden)
        self.x_proj = nn.Linear(data_dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.mid = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.mid2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, data_dim)

    def forward(self, x, t):
        angles = t[:, None] * self.freqs[None, :]
        emb = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)
        h = F.silu(self.t_proj(emb)) + self.x_proj(x)
        h = h + F.gelu(self.mid(self.norm(h)))
        h = h + F.gelu(self.mid2(self.norm2(h)))
        return self.out(h)


def main():
    torch.manual_seed(0)
    model = TimestepDenoiser().to(torch.bfloat16).eval()
    x = torch.randn(8, 16, dtype=torch.bfloat16)
    t = torch.rand(8, dtype=torch.bfloat16)  # diffusion time in [0, 1)
    compiled = torch.compile(model)
    with torch.no_grad():
        noise = compiled(x, t)
    print("predicted noise std:", float(noise.float().std()))


if __name__ == "__main__":
    main()
