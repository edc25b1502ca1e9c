"""The options of `minify fuzz` that split a campaign and give its findings a life: --shard,
--unit-examples, --known, --known-issues, --cluster (minifier.fuzz.shard, .known, .cluster)."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N of the campaign (the same --seed and "
                   "budget on every shard; `minify fuzz merge` joins their findings)")
    p.add_argument("--unit-examples", type=int, default=20, metavar="K",
                   help="programs per unit of a sharded campaign (default 20; every shard must use the same)")
    p.add_argument("--known", action="append", default=[], type=Path, metavar="RECORD",
                   help="a finding record (findings.json, or a campaign folder) whose findings are not new")
    p.add_argument("--known-issues", type=Path, metavar="FILE",
                   help="JSON or TOML: finding id -> issue URL; those findings are masked by name")
    p.add_argument("--cluster", metavar="ADDRESS", help="run the shards on a Dask cluster (tcp://host:8786; "
                   "pip install 'minify[cluster]'), --shards N of them")
    p.add_argument("--shards", type=int, metavar="N", help="shards to cut the campaign into with --cluster "
                   "(default: twice the cluster's workers)")


def problem(opts, ns) -> str | None:
    """The one-line reason these options cannot run, or None; parses --shard into opts.shard."""
    from minifier.fuzz.known import known_records, load_known_issues
    from minifier.fuzz.shard import parse_shard

    if opts.unit_examples < 1:
        return f"--unit-examples {opts.unit_examples}: must be greater than zero"
    try:
        opts.shard = parse_shard(ns.shard) if ns.shard else None
        load_known_issues(opts.known_issues)
        known_records(opts)
    except ValueError as exc:
        return str(exc)
    if opts.shard and opts.replay:
        return "--shard with --replay: a replay runs what is saved, it has no share to draw"
    if (ns.shards is not None or ns.cluster) and (opts.shard or opts.replay):
        return "--cluster: cuts the campaign into shards itself; give it no --shard or --replay"
    if ns.shards is not None and not ns.cluster:
        return "--shards N: only with --cluster ADDRESS"
    return None
