"""Control (user mistake, eager fails too): a float32 activation times a float64 weight.

Not from an issue. Eager raises `RuntimeError: expected m1 and m2 to have the same dtype`;
compiled raises it from Dynamo's fake run. Expected: minify exit 2.
"""
import torch

torch.manual_seed(0)
weight = torch.randn(8, 4, dtype=torch.float64)  # loaded from a float64 checkpoint


@torch.compile
def project(x):
    return torch.relu(x @ weight)


print(project(torch.randn(3, 8)).shape)
