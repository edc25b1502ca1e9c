import os, subprocess, sys, time
T0 = time.time()
import torch
print(f"import {time.time()-T0:.1f}", flush=True)
calls = []
orig_run, orig_popen_init = subprocess.run, subprocess.Popen.__init__
def init(self, args, *a, **k):
    self._t = time.time(); self._a = args
    orig_popen_init(self, args, *a, **k)
subprocess.Popen.__init__ = init
orig_wait = subprocess.Popen.wait
def wait(self, *a, **k):
    r = orig_wait(self, *a, **k)
    if not getattr(self, "_done", False):
        self._done = True
        calls.append((time.time() - self._t, str(self._a)[:150]))
    return r
subprocess.Popen.wait = wait
mode = sys.argv[1]
t = time.time()
if mode == "parallel":
    from concurrent.futures import ThreadPoolExecutor
    from torch._inductor import cpu_vec_isa as v
    flags = v.x86_isa_checker()
    cands = [i for i in v.supported_vec_isa_list if all(f in flags for f in str(i).split())]
    with ThreadPoolExecutor(max(1, len(cands))) as ex:
        print("valid", [str(c) for c, ok in zip(cands, ex.map(bool, cands)) if ok])
    print(f"isa parallel {time.time()-t:.1f}", flush=True)
t = time.time()
torch.compile(lambda x: x * 2 + 1)(torch.ones(4))
print(f"{mode}: first cpu compile {time.time()-t:.1f}  total {time.time()-T0:.1f}", flush=True)
from torch._inductor import cpu_vec_isa as v
print("picked", v.pick_vec_isa())
for d, a in sorted(calls, reverse=True)[:14]:
    print(f"  {d:5.1f} {a}")
print("n calls", len(calls))
