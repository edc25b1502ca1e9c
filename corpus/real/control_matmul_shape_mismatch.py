"""Control (user mistake, eager fails too): matmul of (3, 4) by (5, 6).

Not from an issue: the brief's own example of a user error. Eager raises `RuntimeError: mat1
and mat2 shapes cannot be multiplied (3x4 and 5x6)`; compiled raises it from Dynamo's fake run.
Expected: minify exit 2, "fails without torch.compile too".
"""
import torch

out = torch.compile(lambda a, b: a @ b)(torch.randn(3, 4), torch.randn(5, 6))
print(out.shape)
