"""The torch versions asked for: `2.13,2.14.1` (a minor version means its newest release) and
ranges of minor versions, `2.11-2.14` (2.11, 2.12, 2.13, 2.14)."""
from __future__ import annotations

import re

VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([.+]?[A-Za-z0-9.+]*)?$")
RANGE = re.compile(r"^(\d+)\.(\d+)\s*(?:-|\.\.)\s*(\d+)\.(\d+)$")


def parse_specs(text: str) -> list[str]:
    """The versions of `--torch`, in the order given, each once; ValueError naming a bad one."""
    specs: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        ranged = RANGE.match(part)
        if ranged:
            major, low, major2, high = map(int, ranged.groups())
            if major != major2 or low > high:
                raise ValueError(f"--torch {part}: a range runs from a lower to a higher minor version of one "
                                 f"major version, e.g. 2.11-2.14")
            specs += [f"{major}.{minor}" for minor in range(low, high + 1)]
        elif VERSION.match(part):
            specs.append(part)
        else:
            raise ValueError(f"--torch {part}: not a torch version (e.g. 2.13, 2.14.1, 2.11-2.14)")
    if not specs:
        raise ValueError("--torch: give at least one version, e.g. --torch 2.13,2.14")
    return list(dict.fromkeys(specs))


def version_key(version: str) -> tuple:
    """Orders versions as releases come: 2.9 < 2.10 < 2.14.0 < 2.14.1; a local label (+cpu) is ignored."""
    public = version.split("+", 1)[0]
    return tuple(int(n) if n.isdigit() else -1 for n in re.findall(r"\d+|[a-z]+", public))


def matches(spec: str, version: str) -> bool:
    """Does an installed torch `version` (2.14.1+cpu) answer `spec` (2.14, 2.14.1, 2.14.1+cpu)?"""
    if "+" in spec:
        return version == spec
    public = version.split("+", 1)[0]
    return public == spec or public.startswith(spec + ".")


def requirement(spec: str) -> str:
    """What pip is asked for: the newest release of a minor version, or the one named."""
    return f"torch=={spec}.*" if re.fullmatch(r"\d+\.\d+", spec) else f"torch=={spec}"
