"""A warm worker process: imports torch once, then checks candidates one after another.

Run as `python -m minifier.worker`. Jobs arrive on stdin and answers leave on the original
stdout, as length-prefixed pickles; anything the compiler or compiled code prints goes to
stderr (the parent's log file) so it cannot corrupt the protocol. If compiled code crashes
the process, the parent sees it die and records the signal.
"""
from __future__ import annotations

import os
import pickle
import struct
import sys
import time


def read_message(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack("<I", header)
    return pickle.loads(stream.read(size))


def write_message(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


class CaseValues:
    """The recorded eager values of each case, loaded once per worker."""

    def __init__(self):
        self.cache: dict[str, dict] = {}

    def get(self, case_dir: str) -> dict:
        if case_dir not in self.cache:
            import torch

            self.cache[case_dir] = torch.load(os.path.join(case_dir, "values.pt"), weights_only=True)
        return self.cache[case_dir]


def resolve_inputs(values: dict, refs: list) -> list:
    """Candidate inputs from references to recorded values, with optional simplifications."""
    from minifier.input_transforms import apply_transform

    out = []
    for ref in refs:
        name, transform = (ref, None) if isinstance(ref, str) else ref
        out.append(apply_transform(values[name], transform))
    return out


def run_check(job: dict, values: CaseValues) -> dict:
    from compiler import inject
    from compiler.graph_code import module_from_source
    from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
    from minifier.oracle import check

    spec = CompileSpec.from_dict(job["spec"])
    inputs = resolve_inputs(values.get(job["case_dir"]), job["inputs"])
    model = module_from_source(job["source"])
    injections = [inject.Injection.from_dict(d) for d in job.get("injections", [])]
    with inject.injected(*injections), fresh_compile_state(spec):
        compiled = compile_for_stage(model, job["stage"], spec)
        outcome = check(model, inputs, compiled, stage=job["stage"], atol=job.get("atol"), rtol=job.get("rtol"))
    return dict(outcome.__dict__)


def warm_up() -> dict:
    """Pay Inductor's one-time start-up cost before the first real candidate arrives."""
    import torch

    torch.compile(lambda x: x * 2 + 1)(torch.ones(4))
    torch._dynamo.reset()
    return {"status": "ready"}


def main() -> None:
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints from compiled code go to the log, not into the protocol
    protocol_in = sys.stdin.buffer
    values = CaseValues()
    while True:
        job = read_message(protocol_in)
        if job is None:
            return
        start = time.perf_counter()
        try:
            result = warm_up() if job["op"] == "warmup" else run_check(job, values)
        except Exception as exc:  # a broken job must not kill a warm worker
            import traceback

            result = {"status": "invalid", "kind": "worker_error",
                      "message": f"{type(exc).__name__}: {exc}"[:500], "traceback": traceback.format_exc()[-3000:]}
        result["seconds"] = time.perf_counter() - start
        write_message(protocol_out, result)


if __name__ == "__main__":
    main()
