"""The pre-started repro runner (minifier.workers.interpreters.PrewarmedPython): `python compiler/boot/prewarmed_repro.py`
pays torch.compile's one-time start-up (lazy imports, the CPU ISA probe, pattern tables) on a
throwaway function, forgets it, and waits for one message on stdin (compiler/boot/wire.py) naming
the script to run as `__main__` and its arguments; stdin closed without one, it exits. The job
travels on stdin alone, so stdout and stderr are wholly the script's. Nothing of minify's is
imported, as with `python repro.py`. Imports only the standard library and torch.
"""
import os
import runpy
import sys


def load_wire():
    """compiler/boot/wire.py, loaded by path (see zygote.py's load_wire): no module of ours in sys.modules."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'wire.py')
    spec = importlib.util.spec_from_file_location('minify_wire', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warm_up():
    import torch

    # On the device workers warm up on (a GPU machine's first C++ compile is the longest), without
    # the pool of compile subprocesses repro.py does not use (each imports torch).
    gate = os.environ.get('MINIFY_GPU_GATE')  # compiler/gpu_gate.py: CUDA is started with it held, shared
    if gate:
        import fcntl
        gate = os.open(gate, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(gate, fcntl.LOCK_SH)
    try:
        with torch._inductor.config.patch(compile_threads=1, fx_graph_cache=False):
            torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device='cuda' if torch.cuda.is_available() else 'cpu'))
    except Exception:
        pass
    if gate:
        os.close(gate)
    torch._dynamo.reset()


def run(job):
    """The script run as `python repro.py` runs it; its exit status."""
    sys.stdin = open(os.devnull)
    sys.argv = [job['script'], *job['args']]
    sys.path[0] = os.path.dirname(job['script'])
    code = 0
    try:
        runpy.run_path(job['script'], run_name='__main__')
    except SystemExit as stop:
        code = stop.code
    except BaseException:
        import traceback
        traceback.print_exc()
        code = 1
    return code


def main():
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    wire = load_wire()
    os.nice(10)  # spare-time work: the capture and the workers come first
    warm_up()
    try:
        job = wire.read_message(sys.stdin.buffer)
    except wire.Closed:  # closed without a job: not needed after all
        sys.exit(0)
    code = run(job)
    # Ended as `python repro.py` ends (atexit handlers, flushed streams, its exit status), without the
    # interpreter's teardown of torch.compile's objects and CUDA: a second or more, after the verdict.
    import atexit
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == '__main__':
    main()
