"""torch.compile drops OrderedDict.move_to_end() on a dict passed in: an LRU cache evicts the wrong entry.

Public report: https://github.com/pytorch/pytorch/issues/198189 (open, 2026). Inside the compiled
function `cache.move_to_end("a")` is recorded but not replayed, so after the call the dict keeps
its old order ['a', 'b', 'c'] instead of ['b', 'c', 'a']; the next eviction removes "a", the entry
just used. The returned tensor is right. `backend="eager"` with fullgraph=True fails too (Dynamo
alone). torch 2.13.0, CPU.
"""
import collections

import torch


def touch(cache, x):
    cache.move_to_end("a")  # mark "a" as most recently used
    return x + 1


def make_cache():
    return collections.OrderedDict([("a", 1), ("b", 2), ("c", 3)])


x = torch.zeros(2)
eager_cache, compiled_cache = make_cache(), make_cache()
eager = touch(eager_cache, x)
compiled = torch.compile(touch, fullgraph=True)(compiled_cache, x)
torch.testing.assert_close(compiled, eager)
evicted_eager = eager_cache.popitem(last=False)[0]
evicted_compiled = compiled_cache.popitem(last=False)[0]
print("evicted: eager", evicted_eager, "compiled", evicted_compiled)
assert evicted_compiled == evicted_eager, f"LRU evicted {evicted_compiled!r}, eager evicted {evicted_eager!r}"
