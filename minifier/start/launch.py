"""The first second of a run: check the input, then start what takes longest.

The capture (the user's script under the recording backend) and the zygote (torch's start-up,
paid once for every worker) are separate processes that do not need torch in this one, so
they start before this process imports torch and the rest of minify (seconds); where no
zygote can fork warm workers (a CUDA build, whose zygote only imports), the workers and the
interpreter that will run repro.py start here. Nothing here imports torch.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from compiler import gpu_gate, settings
from compiler.gpu_slots import GPU_WORKERS, SLOTS
from compiler.judging import Judging
from compiler.launch_form import Launch, module_file, node_launch
from compiler.program_files import RunPrograms
from minifier.capture.process import CaptureOptions, RunningCapture, start_capture
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE
from minifier.start.out_folder import RUN_FILE, Claim, FolderError, take
from minifier.workers.bytecode import BytecodePrefix, use_prefix
from minifier.workers.interpreters import WarmInterpreters
from minifier.workers.pool import Worker
from minifier.workers.zygote import Zygote, fork_mode



class UserError(Exception):
    """Bad input or a situation the user must know about: one line, non-zero exit."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)


def default_jobs() -> int:
    """Workers when `-j` is not given: 2 on small machines, one per four cores up to 4 on big
    ones (a GPU machine's 16 cores: 4), leaving cores for Inductor's compiles and the capture."""
    return max(2, min(4, cores() // 4))


@dataclass
class Options:
    script: Path | None  # the script; a pytest node id (`path/test_x.py::test_y`); None with `module`
    module: str | None = None  # `minify -m pkg.module`: run as `python -m pkg.module`
    program: Launch | None = None  # how the program is launched; set by `launch`, which makes `script` its file
    script_args: list[str] = field(default_factory=list)
    out: Path | None = None
    jobs: int = field(default_factory=lambda: default_jobs())
    judging: Judging = Judging()  # --atol, --rtol, --strict, --ignore: how every output is judged, carried whole
    timeout: float = 1800.0  # the whole script under capture
    candidate_timeout: float = 300.0
    max_time: float | None = None
    max_compiles: int | None = None  # compiles the reduction may spend (over all bugs)
    resume: bool = False  # keep the work folder and continue from its checkpoints
    verify: bool = True
    repeat: int = 3  # the original failure must reproduce this many times out of as many
    hang_timeout: float = 60.0  # a candidate of a hang that runs longer than this hangs too
    injections: list[str] = field(default_factory=list)  # --inject specs, planted before the script runs
    blame: bool = True  # after verifying, find the decomposition/pass/lowering/fusion/flag to blame
    emit_test: Path | None = None  # write a pytest regression test per repro here
    force: bool = False  # use an output folder that holds another script's run (or other files)
    early_checks: bool | None = None  # first checks while the capture runs (None: on 4 cores or more)
    torchrun: list[str] | None = None  # torchrun's options: the program is a distributed job (minify torchrun)


@dataclass
class Result:
    code: int
    report: dict


def resolve_program(opts: Options) -> Launch:
    """How the program is launched, from `minify SCRIPT`, `minify -m MODULE` or `minify FILE::TEST`,
    checked; `opts.script` becomes its file (the module's, the test's) for everything that reads one."""
    cwd = Path.cwd()
    if opts.module is not None:
        if opts.script is not None:
            raise UserError(f"give a script or -m {opts.module}, not both (arguments for the program go after --)")
        file = module_file(opts.module, [str(cwd), *sys.path[1:]])
        if file is None:
            raise UserError(f"no module named {opts.module!r} in {cwd} or on sys.path (minify -m runs it as "
                            f"python -m {opts.module} would, from the current directory)")
        program = Launch("module", opts.module, str(cwd))
    elif opts.script is None:
        raise UserError("name the failing program: minify SCRIPT, minify -m MODULE, or minify FILE::TEST")
    elif "::" in str(opts.script):
        program = node_launch(str(opts.script), cwd)
        file = program.test_file
    else:
        program, file = Launch.script(opts.script, cwd), opts.script
    check_script(file)
    if opts.torchrun is not None:  # every rank of the job under the capture (minifier/distributed)
        program = replace(program, torchrun=tuple(opts.torchrun))
    opts.script, opts.program = Path(file).resolve(), program
    return program


def program_of(opts: Options) -> Launch:
    """How the program is launched (after `launch`; a script's path before it)."""
    return opts.program or Launch.script(opts.script)


def check_script(script: Path) -> None:
    if not script.exists():
        raise UserError(f"no such file: {script}")
    if not script.is_file():
        raise UserError(f"not a file: {script}")
    try:
        source = script.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {script}: {exc.strerror}") from None
    try:
        compile(source, str(script), "exec")
    except SyntaxError as exc:
        where = f"{script}:{exc.lineno}" if exc.lineno else f"{script}"  # no line: null bytes in the file
        raise UserError(f"{where}: syntax error: {exc.msg}") from None
    except ValueError as exc:
        raise UserError(f"{script}: cannot read as Python source: {exc}") from None


def _cannot_write(path: Path, exc: OSError) -> UserError:
    return UserError(f"cannot write to the output folder {path}: {exc.strerror or exc}", EXIT_CANNOT_WRITE)


def output_folder(opts: Options) -> tuple[Path, Claim]:
    """The output folder, created, checked and claimed (minifier/start/out_folder.py): the
    user's files refused or left alone, another program's run refused or (--force) set aside,
    this program's earlier run cleared unless --resume, one run at a time."""
    program = program_of(opts)
    out = (opts.out or Path("minify-out") / program.name).resolve()
    script = opts.script.resolve()
    if out == script.parent:
        raise UserError(f"output folder {out} is the script's own folder; choose another with -o")
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write to the output folder {out}: Not a directory", EXIT_CANNOT_WRITE)
    if script.is_relative_to(out):
        raise UserError(f"output folder {out} holds the script {script}; choose another with -o")
    identity = str(script) if program.form == "script" else program.command

    def same_program(previous: str) -> bool:
        return previous == identity or Path(previous).resolve() == script

    try:
        out.mkdir(parents=True, exist_ok=True)
        claim = take(out, identity, same_program, opts.force, opts.resume)
    except FolderError as exc:
        raise UserError(str(exc), exc.code) from None
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    try:
        probe = out / f".minify-probe-{os.getpid()}"  # room for more than the manifest
        try:
            probe.write_bytes(b"0" * 4096)
        finally:
            probe.unlink(missing_ok=True)
        (out / "work").mkdir(exist_ok=True)
        (out / "work" / RUN_FILE).write_text(json.dumps({"script": identity, "launch": program.to_dict()}))
    except OSError as exc:
        claim.release()
        raise _cannot_write(out, exc) from None
    return out, claim


@dataclass
class Launched:
    start: float  # time.perf_counter() when the run began
    out: Path
    work: Path
    capture: RunningCapture
    zygote: Zygote | None
    workers: list = field(default_factory=list)  # started here where no zygote forks them (WorkerPool)
    # the run's one supply of warm interpreters (workers, repro.py's runs); without a warm zygote
    # its first repro runner starts here too: it needs the longest start
    interpreters: WarmInterpreters | None = None
    bytecode: BytecodePrefix | None = None  # where Python caches no bytecode: the run's own cache
    claim: Claim | None = None  # the output folder's lock and manifest (released by stop)
    programs: RunPrograms | None = None  # the run's folder of graphs written as files, named for its processes

    def stop(self) -> None:
        try:
            self._stop()
        finally:
            if self.claim is not None:
                self.claim.release()

    def _stop(self) -> None:
        self.capture.stop()
        if self.zygote is not None:
            self.zygote.close()
        for worker in self.workers:
            worker.kill()
        if self.interpreters is not None:
            self.interpreters.close()
        if self.bytecode is not None:
            self.bytecode.close()
        if self.programs is not None:
            self.programs.close()


def launch(opts: Options) -> Launched:
    """Check the script, prepare the output folder, start the zygote and the capture."""
    start = time.perf_counter()
    settings.share_cores()  # before the first torch process starts, this one included
    settings.drop_overrides()
    program = resolve_program(opts)
    out, claim = output_folder(opts)
    try:
        return _start(opts, program, start, out, claim)
    except BaseException:
        claim.release()
        raise


def _start(opts: Options, program: Launch, start: float, out: Path, claim: Claim) -> Launched:
    """Start the zygote, the capture and (where no zygote forks them) the workers."""
    work = out / "work"
    try:
        (work / "logs").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _cannot_write(out, exc) from None
    mode = fork_mode()
    if mode == "cold" and gpu_gate.gpu_present():  # before any process that may start CUDA (docs/gpu-safety.md)
        gpu_gate.enable()
        SLOTS.enable()
        opts.jobs = min(opts.jobs, GPU_WORKERS)
    forked = mode == "warm"  # the workers are forked warm; on a CUDA build ('cold') only their replacements
    bytecode = use_prefix(work, cores(), forked)  # before the first process that imports torch starts
    programs = RunPrograms.name(work)  # likewise: where every process writes the graphs it loads
    hosted = not program.torchrun  # torchrun's ranks host no zygote: it starts by itself
    zygote = Zygote(work / "logs" / "zygote.log", hosted=hosted, cold=mode == "cold") if mode else None
    capture = start_capture(program, opts.script_args, work / "capture", work / "script.log",
                            CaptureOptions(injections=opts.injections, judging=opts.judging), host=zygote if hosted else None)
    # Without a warm zygote (a CUDA build) each worker imports torch, starts CUDA and compiles once:
    # begun now, beside the capture, not after this process has imported torch itself.
    interpreters = WarmInterpreters(zygote)
    workers = [] if forked else [Worker(work / "logs" / f"worker-{i}.log", interpreters, fork=False).warm()
                                 for i in range(max(1, opts.jobs))]
    if not forked and opts.verify:
        interpreters.keep_ready()
    return Launched(start, out, work, capture, zygote, workers, interpreters, bytecode, claim, programs)
