"""Control (user mistake, eager fails too): reading row 10 of a 5-row tensor.

Not from an issue. Eager raises `IndexError: index 10 is out of bounds for dimension 0 with
size 5`; compiled raises it from Dynamo's fake run. Expected: minify exit 2.
"""
import torch


@torch.compile
def last_token(hidden, lengths):
    return hidden[lengths.max().item() + 4]  # off by more than one


hidden = torch.randn(5, 8)
lengths = torch.tensor([3, 6, 2])
print(last_token(hidden, lengths))
