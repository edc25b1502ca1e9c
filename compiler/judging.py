"""How a run's outputs are judged, as one value: the user's tolerances, `--strict` and `--ignore`.

Made once from the command line (minifier/cli.py) and carried whole, by the options, the
evaluator, each worker job and each repro, to the oracle (compiler/ladder.py), which is the only
place that reads the rule. Standard library only: the command line and the worker import it
before torch. `to_dict`/`from_dict` are its form on the wire (a job, a repro's check arguments).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Judging:
    """The same for every output: `atol`/`rtol` (None: by dtype, compiler.ladder.TOLERANCES);
    `strict`: by the tolerances alone (no fp64 leniency, no noise explanation) and bit for bit;
    `ignore`: rungs not to check (`signed_zero`, `layout`; compiler.rungs)."""
    atol: float | None = None
    rtol: float | None = None
    strict: bool = False
    ignore: tuple = ()

    def __post_init__(self) -> None:
        if not isinstance(self.ignore, tuple):
            object.__setattr__(self, "ignore", tuple(self.ignore))

    @property
    def bitwise(self) -> bool:
        """Whether the last rung (equal bits) is checked: under `strict` only."""
        return self.strict

    def ignoring(self, *rungs: str) -> Judging:
        """This judging with `rungs` not checked either."""
        return Judging(self.atol, self.rtol, self.strict, tuple(dict.fromkeys((*self.ignore, *rungs))))

    def to_dict(self) -> dict:
        """Plain values for the wire: atol, rtol (None: by dtype), strict, ignore (a list)."""
        return {"atol": self.atol, "rtol": self.rtol, "strict": self.strict, "ignore": list(self.ignore)}

    @staticmethod
    def from_dict(wire: dict) -> Judging:
        return Judging(wire.get("atol"), wire.get("rtol"), bool(wire.get("strict", False)), tuple(wire.get("ignore") or ()))
