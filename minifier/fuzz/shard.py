"""`minify fuzz --shard I/N`: a campaign's work cut into units that shards share out.

A sharded campaign of seed S and a budget of M examples is a fixed list of units: unit u draws
`unit_examples` programs (the last one what is left of M) from a seed derived from S and u, with
no findings of other units masked. Shard I of N runs the units u with u % N == I - 1, so N
shards run every unit once, and `--shard 1/N` ... `--shard N/N` together do exactly the work of
`--shard 1/1` (one process, the same seed and budget): the same programs drawn, the same
failures found, merged by id (`minify fuzz merge`). A unit's runs do not depend on what other
units found or on what this process checked before (each unit starts with an empty answer
cache), which is what makes the split exact. The price: a bug that several units meet is shrunk
once in each (the merge keeps one); the plain, unsharded campaign masks a finding for the rest of
the run instead, and so cannot be split. With --max-time and no --max-examples the list of units
has no end and each shard runs its units until its time is spent.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import time
from dataclasses import dataclass
from typing import Iterator

from minifier.fuzz.finding_id import id_of

UNIT_EXAMPLES = 20  # programs drawn per unit (every shard of a campaign must use the same)


@dataclass(frozen=True)
class Shard:
    index: int  # 1..count
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, unit: int) -> bool:
        return unit % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; a ValueError says what is wrong in one line."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text}: expected I/N, e.g. 1/4 (the first of four shards)") from None
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: I must be between 1 and N (shards are numbered 1/{max(count, 1)} "
                         f"to {max(count, 1)}/{max(count, 1)})")
    return Shard(index, count)


@dataclass(frozen=True)
class Unit:
    number: int
    seed: int
    examples: int


def unit_seed(seed: int, number: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}/{number}".encode()).digest()[:4], "big")


def units(seed: int, max_examples: int, unit_examples: int = UNIT_EXAMPLES) -> Iterator[Unit]:
    """Every unit of the campaign, in order (without end when max_examples is unbounded)."""
    for number in itertools.count():
        left = max_examples - number * unit_examples
        if left <= 0:
            return
        yield Unit(number, unit_seed(seed, number), min(unit_examples, left))


def shard_units(seed: int, max_examples: int, shard: Shard, unit_examples: int = UNIT_EXAMPLES) -> Iterator[Unit]:
    return (u for u in units(seed, max_examples, unit_examples) if shard.owns(u.number))


class ShardedCampaign:
    """Runs this shard's units one after another in one worker; counts and findings over all of
    them (what the status line and fuzz.json read from a Campaign)."""

    def __init__(self, opts, runner, make_masks, say):
        self.opts, self.runner, self.make_masks, self.say = opts, runner, make_masks, say
        self.deadline = time.monotonic() + opts.max_time if opts.max_time else None
        self.failures: list = []
        self.ids: set[str] = set()
        self.units_run: list[int] = []
        self.done_generated = self.done_masked = 0
        self.current = None
        self.stopped = "max-examples"

    @property
    def generated(self) -> int:
        return self.done_generated + (self.current.generated if self.current else 0)

    @property
    def masked(self) -> int:
        return self.done_masked + (self.current.masked if self.current else 0)

    def time_up(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def run(self) -> list:
        from minifier.fuzz.campaign import Campaign

        for unit in shard_units(self.opts.seed, self.opts.max_examples, self.opts.shard, self.opts.unit_examples):
            if self.time_up():
                self.stopped = "max-time"
                break
            self.say(f"unit {unit.number} (seed {unit.seed}, {unit.examples} examples)")
            self.runner.new_cache()  # a unit's run does not depend on what this process checked before
            opts = dataclasses.replace(self.opts, seed=unit.seed, max_examples=unit.examples)
            self.current = Campaign(opts, self.runner, self.make_masks(), self.say)
            self.current.deadline = self.deadline
            found = self.current.run()
            self.done_generated += self.current.generated
            self.done_masked += self.current.masked
            self.units_run.append(unit.number)
            self.current = None
            for failure in found:
                if id_of(failure) not in self.ids:  # the same bug met by two units: kept once
                    self.ids.add(id_of(failure))
                    self.failures.append(failure)
        self.stopped = "max-time" if self.time_up() else "max-examples"
        self.failures.sort(key=lambda f: f.rank)
        return self.failures
