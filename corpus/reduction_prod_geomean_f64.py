"""Float64 portfolio returns; C++ product reductions start their accumulator at 0.

Compounded growth is a product over periods, computed in float64. The planted bug starts
every C++ prod accumulator at 0 instead of 1, so every compounded return is 0 and the
geometric means are wrong.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("reduction:prod:zero@cpp")


class Portfolio(nn.Module):
    def __init__(self, assets=12):
        super().__init__()
        self.logits = nn.Parameter(torch.randn(assets, dtype=torch.float64))
        self.factor = nn.Linear(assets, 4, dtype=torch.float64)
        self.factor_norm = nn.LayerNorm(4, dtype=torch.float64)
        self.tilt = nn.Linear(4, assets, dtype=torch.float64)

    def forward(self, returns):  # (periods, assets) simple returns
        factors = torch.tanh(self.factor_norm(self.factor(returns))).mean(0)
        weights = torch.softmax(self.logits + 0.1 * self.tilt(factors), dim=0)
        growth = (1.0 + returns).prod(dim=0)  # compounded growth per asset
        periods = returns.shape[0]
        geo_mean = growth.pow(1.0 / periods) - 1.0
        portfolio = (1.0 + returns @ weights).log().sum().exp()
        risk = ((returns - returns.mean(0)) ** 2).mean(0).sqrt()
        drawdown = (returns.cumsum(0).cummax(0).values - returns.cumsum(0)).amax(0)
        return geo_mean, portfolio, (weights * risk).sum(), (weights * drawdown).sum()


def main():
    torch.manual_seed(0)
    model = Portfolio()
    returns = torch.randn(36, 12, dtype=torch.float64) * 0.02 + 0.005
    compiled = torch.compile(model)
    with torch.no_grad():
        geo_mean, portfolio, risk, drawdown = compiled(returns)
    print("geometric means:", geo_mean[:4], "portfolio growth:", float(portfolio))


if __name__ == "__main__":
    main()
