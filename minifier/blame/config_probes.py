"""Blame's questions about configuration: the Inductor config the script changed, config flags
that flip the verdict, and AOTAutograd's CSE (the other switch of the decomposition stage)."""
from __future__ import annotations

from compiler.subsystems import Experiment
from minifier.blame.experiments import Search
from minifier.blame.halving import minimal_set


def config_reverted(keys: list, defaults: dict) -> Experiment:
    return Experiment(f"script config reverted: {', '.join(keys)}", config={k: defaults[k] for k in keys})


def script_config(search: Search, defaults: dict) -> None:
    """Does the failure need the Inductor config the script changed? Which keys?"""
    if not defaults:
        return

    def reverted(keys: list) -> Experiment:
        return config_reverted(keys, defaults)

    keys = sorted(defaults)
    if not search.probe(reverted(keys)):
        return
    needed = minimal_set(keys, lambda ks: search.fixes(reverted(ks)))
    changed = {k: search.manifest["config"][k] for k in needed}
    search.find("config", f"needs the script's config {changed}: back at the defaults it passes", reverted(needed))


def config_flags(search: Search, flips: dict) -> bool:
    """Config flags that flip the verdict: all at once (one compile), then the minimal set."""
    flips = {k: v for k, v in flips.items() if k not in search.base}
    if not flips or not search.probe(search.experiment("config flags flipped", config=dict(flips))):
        return False
    keys = sorted(flips)
    needed = minimal_set(keys, lambda ks: search.fixes(search.experiment(f"config: {', '.join(ks)}",
                                                                         config={k: flips[k] for k in ks})))
    setting = {k: flips[k] for k in needed}
    search.find("config", f"setting {setting} makes it pass", search.experiment(f"config: {', '.join(needed)}",
                                                                               config=setting))
    return True


def partitioner(search: Search) -> bool:
    """The other switch of the decomposition stage that CompilerBisector knows: AOT's CSE."""
    no_cse = Experiment("AOTAutograd CSE off", config={"functorch.cse": False})
    if search.probe(no_cse):
        search.find("partitioner", "fails only with AOTAutograd's CSE on", no_cse)
        return True
    return False
