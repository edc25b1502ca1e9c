"""The regression window in words, from the outcome on each version: "fails since 2.12.0
(passes on 2.11.0); still fails on 2.14.1", or "...; fixed in 2.14.1". Only "reproduces" and
"passes" place the window; a different failure or a version that cannot run is named beside
it, never counted either way. Outcomes that alternate give no window, said so."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import groupby

from minifier.versions.outcome import PASSES, REPRODUCES
from minifier.versions.run import VersionRun
from minifier.versions.specs import version_key


@dataclass
class Window:
    found: bool
    text: str
    first_bad: str | None = None  # the oldest version that reproduces it
    last_good_before: str | None = None  # the newest passing version before first_bad, if any
    fixed_in: str | None = None  # the first passing version after the last one that reproduces it
    still_fails_on: str | None = None  # the newest version tested, where it still reproduces

    def to_dict(self) -> dict:
        return asdict(self)


def ordered(rows: list[VersionRun]) -> list[VersionRun]:
    return sorted(rows, key=lambda r: version_key(r.torch or r.spec))


def window(rows: list[VersionRun]) -> Window:
    rows = ordered(rows)
    decisive = [(r.torch or r.spec, r.outcome) for r in rows if r.outcome in (REPRODUCES, PASSES)]
    aside = "".join(f"; {r.torch or r.spec}: {r.outcome}" for r in rows if r.outcome not in (REPRODUCES, PASSES))
    runs = [(outcome, [v for v, _ in group]) for outcome, group in groupby(decisive, key=lambda d: d[1])]
    shape = [outcome for outcome, _ in runs]
    if REPRODUCES not in shape:
        said = f"passes on {', '.join(v for v, _ in decisive)}" if decisive else "no version tested could run it"
        return Window(False, f"no window: it reproduces on no version tested ({said}){aside}")
    if shape not in ([REPRODUCES], [PASSES, REPRODUCES], [REPRODUCES, PASSES], [PASSES, REPRODUCES, PASSES]):
        bad = [v for v, o in decisive if o == REPRODUCES]
        good = [v for v, o in decisive if o == PASSES]
        return Window(False, f"no single window: reproduces on {', '.join(bad)}; passes on {', '.join(good)}{aside}")
    at = shape.index(REPRODUCES)
    failing = runs[at][1]
    found = Window(True, "", first_bad=failing[0])
    if at == 1:
        found.last_good_before = runs[0][1][-1]
        text = f"fails since {failing[0]} (passes on {found.last_good_before})"
    else:
        text = f"fails on {failing[0]}, the oldest version tested that ran it"
    if at + 1 < len(runs):
        found.fixed_in = runs[at + 1][1][0]
        text += f"; fixed in {found.fixed_in}" + (f" (last failing: {failing[-1]})" if len(failing) > 1 else "")
    else:
        found.still_fails_on = failing[-1]
        text += f"; still fails on {failing[-1]}"
    found.text = text + aside
    return found
