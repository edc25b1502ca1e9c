"""`minify [options] torchrun [torchrun options] SCRIPT [args]`, read just enough to run it.

torchrun's own options are kept and passed through (the output options, `--nproc-per-node`,
`--local-ranks-filter`, ...), except those that say where the ranks meet: every run of minify
rendezvouses on a port of its own (`--standalone`: the store binds port 0, so the system picks
a free port at the moment it is taken, and two runs on one machine never meet), with no restarts
(a failing rank must end the job, not start it again). Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# torchrun's options that take no value (every other option takes one: `--opt V` or `--opt=V`)
FLAGS = {"--standalone", "-m", "--module", "--no-python", "--run-path", "--virtual-local-rank"}
# Where the ranks meet and how often they restart: minify's to choose, per run
DROPPED = {"--standalone", "--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf", "--master-addr",
           "--master-port", "--max-restarts", "--node-rank", "--local-addr"}
LAUNCHERS = (["torchrun"], ["python", "-m", "torch.distributed.run"], ["python3", "-m", "torch.distributed.run"])


class TorchrunError(ValueError):
    """A torchrun command minify cannot run (one line)."""


@dataclass
class TorchrunCommand:
    options: list[str] = field(default_factory=list)  # torchrun's, those passed through
    nproc: int = 1
    module: bool = False  # `-m`: the target is a module, as `python -m` runs it
    target: str = ""  # the script's path, or the module's name
    args: list[str] = field(default_factory=list)  # the program's own
    rank_specs: dict[str, str] = field(default_factory=dict)  # `--inject rank=R:SPEC` of minify's, by SPEC

    def launcher_options(self) -> list[str]:
        """torchrun's options as minify runs the job: the user's, on a rendezvous of this run's own."""
        return [*self.options, "--standalone", "--max-restarts", "0"]


def launcher_at(argv: list[str]) -> tuple[int, int] | None:
    """Where `torchrun` or `python -m torch.distributed.run` starts in argv and how many words it
    takes (minify's own options come before it); None if argv holds neither."""
    for i in range(len(argv)):
        for words in LAUNCHERS:
            if argv[i:i + len(words)] == words or (len(words) == 3 and argv[i].endswith("python")
                                                   and argv[i + 1:i + 3] == words[1:]):
                return i, len(words)
    return None


def _name(option: str) -> str:
    name = option.split("=", 1)[0]
    return name.replace("_", "-") if name.startswith("--") else name


def parse(argv: list[str]) -> TorchrunCommand:
    """torchrun's arguments (what follows `torchrun`): its options, then the script or module and
    the program's arguments."""
    cmd = TorchrunCommand()
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        name, inline = _name(argv[i]), "=" in argv[i]
        takes_value = name not in FLAGS and not inline
        if takes_value and i + 1 >= len(argv):
            raise TorchrunError(f"torchrun option {argv[i]} needs a value")
        words = argv[i:i + 2] if takes_value else argv[i:i + 1]
        value = words[1] if takes_value else argv[i].split("=", 1)[1] if inline else None
        i += len(words)
        _take(cmd, name, value, words)
    if i < len(argv) and argv[i] == "--":
        i += 1
    if i >= len(argv):
        raise TorchrunError("torchrun: name the training script (minify torchrun --nproc-per-node 2 train.py)")
    cmd.target, cmd.args = argv[i], argv[i + 1:]
    return cmd


def _take(cmd: TorchrunCommand, name: str, value: str | None, words: list[str]) -> None:
    if name in ("-h", "--help"):
        raise TorchrunError("minify torchrun takes torchrun's options and a script: see torchrun --help")
    if name == "--no-python":
        raise TorchrunError("torchrun --no-python runs a program that is not Python: minify needs a Python script "
                            "or module")
    if name in ("-m", "--module"):
        cmd.module = True
    elif name == "--nnodes":
        if value not in ("1", "1:1"):
            raise TorchrunError(f"--nnodes {value}: minify runs the job on this machine only (--nnodes 1)")
    elif name == "--nproc-per-node":
        if not (value or "").isdigit() or int(value) < 1:
            raise TorchrunError(f"--nproc-per-node {value}: minify needs a number of processes (gpu, cpu and auto "
                                f"are not read here)")
        cmd.nproc = int(value)
        cmd.options += ["--nproc-per-node", value]
    elif name not in DROPPED:
        cmd.options += words
