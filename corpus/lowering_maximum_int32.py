"""Inventory simulator on int32 counts; Inductor lowers aten.maximum as maximum + 1.

Stock levels are int32. Each step floors the stock at zero with torch.maximum; the planted
wrong lowering adds one, so the returned int32 levels are off (an exact integer mismatch)
and the float costs computed from them are wrong too.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:maximum:accuracy:add_one")


class Inventory(nn.Module):
    def __init__(self, steps=6):
        super().__init__()
        self.steps = steps
        self.register_buffer("holding_cost", torch.tensor(0.25))
        self.register_buffer("stockout_cost", torch.tensor(2.0))

    def forward(self, stock, demand, orders):
        zero = torch.zeros_like(stock)
        cost = torch.zeros(stock.shape, dtype=torch.float32)
        for t in range(self.steps):
            stock = stock + orders[:, t]
            short = torch.maximum(demand[:, t] - stock, zero)
            stock = torch.maximum(stock - demand[:, t], zero)
            cost = cost + stock.float() * self.holding_cost + short.float() * self.stockout_cost
        return stock, cost


def main():
    torch.manual_seed(0)
    sim = Inventory().eval()
    stock = torch.randint(0, 20, (50,), dtype=torch.int32)
    demand = torch.randint(0, 12, (50, 6), dtype=torch.int32)
    orders = torch.randint(0, 10, (50, 6), dtype=torch.int32)
    compiled = torch.compile(sim)
    stock_end, cost = compiled(stock, demand, orders)
    print("final stock[:8]:", stock_end[:8].tolist(), "mean cost:", float(cost.mean()))


if __name__ == "__main__":
    main()
