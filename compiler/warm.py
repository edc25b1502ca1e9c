"""One-time start-up work of Inductor, started early where it can overlap other work.

Inductor's first C++ compile in a process probes which vector ISAs the CPU can run: it
builds a test library per ISA and loads each in a child Python (about 1.5 s on 2 cores,
mostly waiting on those children). The probe depends only on the machine, so a thread can
run it while the script is still importing and tracing; the compile then finds it done.
"""
from __future__ import annotations

import threading


def probe_cpu_isa_in_background() -> threading.Thread:
    def probe():
        try:
            from torch._inductor import cpu_vec_isa

            cpu_vec_isa.valid_vec_isa_list()  # functools.cache: the compile reuses the answer
        except Exception:  # other torch versions: the compile probes as usual
            pass

    thread = threading.Thread(target=probe, name="minify-isa-probe", daemon=True)
    thread.start()
    return thread
