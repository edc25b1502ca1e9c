"""The start of a process that hosts the zygote (the capture: minifier.workers.zygote.Zygote.host_command).

`python compiler/boot/host.py FD LOG NICENESS MODE MODULE ARGS...`: it imports what both need, then
forks the zygote (compiler/boot/zygote.py, run in the child with FD NICENESS MODE), which renices
itself and warms up while this process goes on at full priority as `run_module.py MODULE ARGS...`.
Imports only the standard library and torch.
"""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fork_zygote(fd, log, nice, mode):
    """The zygote in a child of its own group, its output to `log`; this process goes on."""
    if os.fork() == 0:
        os.setsid()  # its own group, with every child it forks: the capture's end (its group killed) is not theirs
        os.chdir(os.path.dirname(log))
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.argv = ["minify-zygote", fd, nice, mode]
        try:
            runpy.run_path(os.path.join(HERE, "zygote.py"), run_name="__main__")
        finally:
            os._exit(0)
    os.close(int(fd))


def main():
    if sys.path and sys.path[0] == HERE:
        sys.path[0] = ""  # this folder off sys.path: the working directory, as `python -c` has it
    fd, log, nice, mode = sys.argv[1:5]
    del sys.argv[1:5]
    if mode == "cold" and "PYTORCH_NVML_BASED_CUDA_CHECK" not in os.environ:  # see zygote.py's nvml_checks
        os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = os.environ["MINIFY_SET_NVML"] = "1"
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    fork_zygote(fd, log, nice, mode)
    if os.environ.pop("MINIFY_SET_NVML", None):
        del os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"]
    runpy.run_path(os.path.join(HERE, "run_module.py"), run_name="__main__")


if __name__ == "__main__":
    main()
