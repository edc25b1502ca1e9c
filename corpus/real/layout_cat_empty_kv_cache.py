"""A KV cache that starts empty: torch.cat([empty, key], dim=-2) has other strides compiled.

Found by running minify on a tiny random-weight GPT-2 from transformers 5.24 (its cache starts
from a legacy empty tensor `torch.tensor([])` and concatenates the new keys, transposed, along the
sequence dim). Eager's cat returns a contiguous (512, 256, 16, 1) result; under torch.compile the
cat decomposition keeps the key's layout, (512, 16, 32, 1). The values are equal: a layout
difference (minify's `layout` rung; `--ignore layout` turns it off), which breaks code that
calls `.view()` on the result or hands it to C++ expecting eager's strides. torch 2.13.0, CPU.
"""
import torch


def attend(cache, hidden, heads=2):
    batch, seq, width = hidden.shape
    key = hidden.view(batch, seq, heads, width // heads).transpose(1, 2)  # (batch, heads, seq, dim)
    return torch.cat([cache, key], dim=-2)


torch.manual_seed(0)
compiled = torch.compile(attend)
hidden = torch.randn(2, 16, 32)
eager_out, compiled_out = attend(torch.tensor([]), hidden), compiled(torch.tensor([]), hidden)
print("eager strides", eager_out.stride(), "compiled strides", compiled_out.stride())
print("values equal:", torch.equal(eager_out, compiled_out))
