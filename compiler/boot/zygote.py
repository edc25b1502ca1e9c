"""The zygote: one process that pays torch's start-up once and forks a child per request
(minifier/workers/zygote.py is the parent's side and says why).

`python compiler/boot/zygote.py FD NICENESS MODE`: FD is its end of a SOCK_SEQPACKET socket, MODE
'warm' (a CPU build: compile once here, so that no child pays it) or 'cold' (a CUDA build: only
imports, then proves a first child can start CUDA). Hosted, compiler/boot/host.py runs it in a
process forked from the capture, with the same arguments. Imports only the standard library and torch.
"""
import os
import select
import socket
import sys
import time
import traceback


def load_wire():
    """compiler/boot/wire.py, the one wire protocol, loaded by path: this folder is off sys.path, and
    no module of ours is left in sys.modules for a forked script to import by mistake."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'wire.py')
    spec = importlib.util.spec_from_file_location('minify_wire', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wire = load_wire()


def toy(x, w):  # a matmul, a decomposition, a reduction, a pointwise op: one small kernel to build
    import torch

    return torch.relu(torch.nn.functional.linear(x, w)).sum(-1)


def warm_up():  # a CPU build: compile once here, so that no child pays it
    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    saved = (inductor_config.compile_threads, inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache)
    inductor_config.compile_threads = 1  # no compile pool: a process with threads cannot fork safely
    inductor_config.fx_graph_cache = False  # a cache hit would skip the very work that warms up
    functorch_config.enable_autograd_cache = False
    try:
        torch.compile(toy)(torch.randn(8, 8), torch.randn(8, 8))
    except Exception:
        traceback.print_exc()
    torch._dynamo.reset()
    inductor_config.compile_threads, inductor_config.fx_graph_cache, functorch_config.enable_autograd_cache = saved


def nvml_checks(on):  # Inductor asks torch.cuda.is_available() at import (runtime/benchmarking.py):
    # through NVML that starts no CUDA, so the process can still fork; off again for the children
    if on and 'PYTORCH_NVML_BASED_CUDA_CHECK' not in os.environ:
        os.environ['PYTORCH_NVML_BASED_CUDA_CHECK'] = os.environ['MINIFY_SET_NVML'] = '1'
    elif not on and os.environ.pop('MINIFY_SET_NVML', None):
        del os.environ['PYTORCH_NVML_BASED_CUDA_CHECK']


def prove_cold():  # a CUDA build: no compile here (on a GPU machine a CPU compile started CUDA), only
    # imports; then a first child must start CUDA, or no child is forked at all
    import torch

    nvml_checks(True)
    import torch._dynamo, torch._inductor.compile_fx  # noqa: F401, E401
    try:
        import torch._inductor.codegen.triton  # noqa: F401
        from triton.runtime.cache import triton_key
        triton_key()  # a hash of Triton's files, cached: part of each child's first compile otherwise
    except ImportError:
        pass
    nvml_checks(False)
    if torch.cuda.is_initialized():
        refuse("CUDA was started before the zygote forked: no child could use it")
    pid = os.fork()
    if pid == 0:
        try:
            gate = os.environ.get('MINIFY_GPU_GATE')  # compiler/gpu_gate.py: CUDA starts shared
            if gate:
                import fcntl
                fcntl.flock(os.open(gate, os.O_RDWR | os.O_CREAT, 0o666), fcntl.LOCK_SH)
            if torch.cuda.is_available():
                torch.ones(1, device='cuda').add_(1)
                torch.cuda.synchronize()
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code != 0:
        refuse(f"a forked child could not start CUDA (exit {code})")


def refuse(why):  # the socket closes with us: callers start plain subprocesses instead
    print(why, flush=True)
    os._exit(1)


def child(ctl, request):
    ctl.close()
    for fd in (0, 1, 2):
        os.dup2(request['fds'][fd], fd)
    for fd in set(request['fds']):
        if fd > 2:
            os.close(fd)
    sys.stdin = open(0, 'r', closefd=False)
    sys.stdout = open(1, 'w', closefd=False)
    sys.stderr = open(2, 'w', closefd=False)
    os.chdir(request['cwd'])
    code = 0
    try:
        import runpy
        if request['kind'] == 'module':
            sys.path[0:0] = [request['root']]
            sys.argv = [request['module'], *request['args']]
            runpy.run_module(request['module'], run_name='__main__', alter_sys=True)
        else:
            sys.argv = [request['script'], *request['args']]
            sys.path[0] = os.path.dirname(request['script'])
            runpy.run_path(request['script'], run_name='__main__')
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code)


def reap(ctl):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ctl.send(wire.encode({'exit': pid, 'code': os.waitstatus_to_exitcode(status)}))


def serve(ctl):
    """Fork a child per request, answer with its pid, and later with its exit status."""
    ctl.send(wire.encode({'ready': True}))
    while True:
        ready, _, _ = select.select([ctl], [], [], 0.05)
        reap(ctl)
        if not ready:
            continue
        data, fds, _, _ = socket.recv_fds(ctl, wire.DATAGRAM, 3)
        if not data:
            break
        request = wire.decode(data)
        request['fds'] = fds
        pid = os.fork()
        if pid == 0:
            child(ctl, request)
        for fd in fds:
            os.close(fd)
        ctl.send(wire.encode({'id': request['id'], 'pid': pid}))


def main(argv):
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path[0] = ''  # this folder off sys.path: the working directory, as `python -c` has it
    started = time.time()
    ctl = socket.socket(fileno=int(argv[1]))
    ctl.send(wire.encode({'zygote': os.getpid()}))
    os.nice(int(argv[2]))
    import torch  # noqa: F401
    import torch._functorch.config  # noqa: F401
    import torch._inductor.config  # noqa: F401
    prove_cold() if argv[3:4] == ['cold'] else warm_up()
    print(f"warmed up ({argv[3:4]}) in {time.time() - started:.1f} s", flush=True)
    serve(ctl)
    os._exit(0)  # no teardown of torch: nothing here needs it


if __name__ == '__main__':
    main(sys.argv)
