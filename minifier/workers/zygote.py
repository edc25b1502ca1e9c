"""One warm parent that forks workers and repro runs, so torch's start-up is paid once.

Every fresh Python that compiles pays the same start-up: `import torch`, Inductor's lazy
imports, the CPU ISA probe, pattern tables (seconds of CPU). A run of minify
starts a capture, two workers, a repro check and, after crashes, replacement workers: on 2
cores those start-ups fought the capture for the CPU. The zygote pays it once, on a
throwaway function, and then forks a child per request. A forked child is a fresh process
that has compiled that function: it shares no state with minify or with other candidates.

The capture hosts it: the capture's process imports torch, then forks the zygote, which
lowers its priority and warms up while the capture runs the script. Both pay one import.

On CPU builds of torch it warms up with a compile ('warm'). A process that touched CUDA
cannot be forked safely, and on the H100 a CPU compile did start CUDA; so on a CUDA build the
zygote only imports ('cold'), checks that CUDA is not started, and proves a first child can
start it before it says ready. Its children start CUDA and compile once themselves (still
sooner than a fresh worker, which imports torch first): it replaces the workers a device-side
assert ends. Wherever the zygote cannot start, callers fall back to plain subprocesses.

Protocol: a SOCK_SEQPACKET socket pair, one message of compiler/boot/wire.py a datagram. The
parent sends one request per child with the child's stdin, stdout and stderr as passed file
descriptors; the zygote answers with the child's pid, and later with its exit status (waitpid's,
as Popen's returncode: -N for a signal), since only the zygote can wait for its children.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from compiler.boot import HOST, RUN_MODULE, ZYGOTE, wire
from minifier.workers.reap import kill_group

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The zygote and everything forked from it run at this lower priority: while the capture runs
# the user's script, warming up must not slow it down; afterwards the forked processes are the
# only busy ones, so the priority costs them nothing.
NICENESS = 10


def supported() -> bool:
    """A zygote that warms up with a compile: a CPU build of torch, where CUDA cannot be involved."""
    return fork_mode() == "warm"


def fork_mode() -> str | None:
    """'warm' on a CPU build of torch, 'cold' on a CUDA or ROCm build (MINIFY_ZYGOTE=cold asks
    for it on any build), None where no zygote runs (MINIFY_NO_ZYGOTE, no fd passing). Read from
    torch/version.py, so that asking does not cost an `import torch`."""
    if os.environ.get("MINIFY_NO_ZYGOTE") or not hasattr(socket, "send_fds") or sys.platform != "linux":
        return None
    if os.environ.get("MINIFY_ZYGOTE") == "cold":
        return "cold"
    cpu = _cpu_build()
    return None if cpu is None else "warm" if cpu else "cold"


def _cpu_build() -> bool | None:
    """Whether the torch installed is a CPU build (None: no torch/version.py to tell)."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("torch")
    version = Path(spec.origin).with_name("version.py") if spec and spec.origin else None
    try:
        text = version.read_text()
    except (OSError, AttributeError):
        return None
    builds = {name: re.search(rf"^{name}\b[^=\n]*=\s*(.+)$", text, re.M) for name in ("cuda", "hip")}
    return all(found is not None and found.group(1).strip() == "None" for found in builds.values())


class Zygote:
    """The parent's side: start the zygote, ask it for children, learn how they ended."""

    def __init__(self, log_path: Path, hosted: bool = False, cold: bool = False):
        """Start the zygote, or with `hosted` leave that to the process whose command
        `host_command` makes (compiler/boot/host.py): it shares that process's start-up. `cold`:
        it only imports (a CUDA build), and its children warm up themselves."""
        self.log_path = log_path
        self.cold = cold
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl = ours
        self.proc = None
        self.pid: int | None = None  # the zygote's, once it says hello
        self.theirs: socket.socket | None = theirs if hosted else None
        if not hosted:
            with open(log_path, "ab") as log:
                self.proc = subprocess.Popen([sys.executable, ZYGOTE, str(theirs.fileno()), str(NICENESS),
                                              self.mode], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=log, cwd=str(log_path.parent), start_new_session=True)
            theirs.close()
        self.lock = threading.Lock()  # one request at a time
        self.changed = threading.Condition()
        self.ready = False
        self.dead = False
        self.pids: dict[int, int] = {}  # request id -> pid
        self.codes: dict[int, int] = {}  # pid -> exit code
        self.next_id = 0
        threading.Thread(target=self._listen, name="minify-zygote", daemon=True).start()

    def host_command(self, command: list[str]) -> tuple[list[str], tuple[int, ...]]:
        """`command` (`python compiler/boot/run_module.py MODULE ARGS`, minifier.workers.interpreters.module_command)
        made to import torch first and fork the zygote from there (compiler/boot/host.py), and the
        descriptors to pass to it; call `hosted_started` once it runs."""
        assert self.theirs is not None and command[1] == RUN_MODULE
        fd = self.theirs.fileno()
        return [command[0], HOST, str(fd), str(self.log_path), str(NICENESS), self.mode, *command[2:]], (fd,)

    @property
    def mode(self) -> str:
        return "cold" if self.cold else "warm"

    def hosted_started(self) -> None:
        """The host has its end of the socket (or never will): drop ours, so that the zygote's
        end, or the host's failure to start, closes the socket."""
        if self.theirs is not None:
            self.theirs.close()
            self.theirs = None

    def _listen(self) -> None:
        while True:
            try:
                data = self.ctl.recv(wire.DATAGRAM)
            except OSError:
                data = b""
            with self.changed:
                if not data:
                    self.dead = True
                    self.changed.notify_all()
                    return
                message = wire.decode(data)
                if "zygote" in message:
                    self.pid = message["zygote"]
                elif message.get("ready"):
                    self.ready = True
                elif "exit" in message:
                    self.codes[message["exit"]] = message["code"]
                else:
                    self.pids[message["id"]] = message["pid"]
                self.changed.notify_all()

    def wait_ready(self, timeout: float = 300.0) -> bool:
        with self.changed:
            self.changed.wait_for(lambda: self.ready or self.dead, timeout)
            return self.ready and not self.dead

    def spawn(self, request: dict, stdin: int, stdout: int, stderr: int, timeout: float = 300.0) -> "Forked | None":
        """A child running `request` (compiler/boot/zygote.py: a module, or a script as `__main__`) on these
        file descriptors, or None if the zygote is not there to fork it."""
        if not self.wait_ready(timeout):
            return None
        with self.lock:
            request_id, self.next_id = self.next_id, self.next_id + 1
            frame = wire.encode({**request, "id": request_id})
            if len(frame) > wire.DATAGRAM:  # more than the zygote reads at once: a plain subprocess runs it
                return None
            try:
                socket.send_fds(self.ctl, [frame], [stdin, stdout, stderr])
            except OSError:
                return None
        with self.changed:
            self.changed.wait_for(lambda: request_id in self.pids or self.dead, timeout)
            pid = self.pids.pop(request_id, None)
        return None if pid is None else Forked(self, pid)

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.codes or self.dead, timeout)
            if pid in self.codes:
                return self.codes[pid]
            return -signal.SIGKILL if self.dead else None  # no zygote, no status: it was killed with it

    def close(self) -> None:
        """Kill it: it holds nothing, and tearing torch down would take a second or two. Its
        children (workers, repro runs, blame's probes) are its group, and end with it."""
        self.hosted_started()
        self.kill_group()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        elif self.pid is not None and not self.dead:  # a hosted zygote is not our child
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.pid = None  # never signal that number again: it may be reused
        self.ctl.close()

    def kill_group(self) -> None:
        """End the zygote and every child it forked (their group, compiler/boot/host.py):
        SIGTERM, a moment, then SIGKILL (reap.kill_group): at a stop, or at the end of the run."""
        pid = self.pid if self.pid is not None else self.proc.pid if self.proc is not None else None
        kill_group(pid)


class Forked:
    """A forked child, with the parts of Popen's interface the pool uses."""

    def __init__(self, zygote: Zygote, pid: int):
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None
        self.stdin = self.stdout = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _spawn(zygote: Zygote, request: dict, theirs: tuple, ours: tuple) -> Forked | None:
    """Fork a child on the descriptors `theirs` (stdin, stdout, stderr), closed here once it
    has them; if there is no child, our ends `ours` are closed too."""
    try:
        child = zygote.spawn(request, *theirs)
    finally:
        for fd in theirs:
            os.close(fd)
    if child is None:
        for fd in ours:
            os.close(fd)
    return child


def fork_module(zygote: Zygote | None, module: str, cwd: Path, stderr, args: list[str] = (),
                text: bool = False) -> Forked | None:
    """`python -m module ARGS` as a forked child with piped stdin/stdout (binary, or `text`);
    its stderr goes to `stderr` (a path, appended to, or an open file)."""
    if zygote is None:
        return None
    job_r, job_w = os.pipe()
    out_r, out_w = os.pipe()
    err = os.dup(stderr.fileno()) if hasattr(stderr, "fileno") else \
        os.open(stderr or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    child = _spawn(zygote, {"kind": "module", "module": module, "args": list(args), "root": str(PROJECT_ROOT),
                            "cwd": str(cwd)}, (job_r, out_w, err), (job_w, out_r))
    if child is None:
        return None
    child.stdin, child.stdout = os.fdopen(job_w, "w" if text else "wb"), os.fdopen(out_r, "r" if text else "rb")
    return child


def run_script(zygote: Zygote, script: Path, args: list[str], cwd: Path,
               timeout: float) -> tuple[int, str, str] | None:
    """(exit code, stdout, stderr) of `python script ARGS` run as a forked child; None if it
    could not be forked."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    child = _spawn(zygote, {"kind": "script", "script": str(script), "args": list(args), "cwd": str(cwd)},
                   (null, out_w, err_w), (out_r, err_r))
    if child is None:
        return None
    chunks: dict[int, bytes] = {}

    def drain(fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            chunks[fd] = stream.read()

    readers = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r)]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    try:
        code = child.wait(timeout)
    except subprocess.TimeoutExpired:
        from minifier.workers.reap import end_now

        code = end_now(child)
        return None if code is None else (code, "", f"repro.py did not finish within {timeout:.0f} s")
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()) + 5)
    decode = lambda fd: chunks.get(fd, b"").decode(errors="replace")
    return code, decode(out_r), decode(err_r)
