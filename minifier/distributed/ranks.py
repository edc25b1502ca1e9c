"""How each rank of a job ended, and which rank's failure is the job's.

A rank the job ended (torchrun's SIGTERM after a peer failed, or minify's at the timeout) was
waiting on another: it is reported as "waiting on rank N", never as a bug of its own. The job's
failure is the first rank whose own graphs failed, else the first rank that ended badly by
itself (a crash, an error; not an error of a collective whose peer had left), else the first
that ended well by itself (not one the job ended after its peers had finished), else rank 0.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RankOutcome:
    rank: int
    returncode: int | None  # None: it never ended by itself (the job ended it, or it left no outcome)
    ended_by: str | None  # the signal the job ended it with (SIGTERM), None if it ended by itself
    seconds: float | None
    world_size: int = 1

    lost_peer: bool = False  # it raised because a peer left a collective (gloo: connection closed by peer)

    @property
    def waiting(self) -> bool:
        return self.ended_by is not None or self.lost_peer

    def to_dict(self, capture, chosen: int) -> dict:
        """A row of report.json's `ranks`: how it ended, its failing graphs, whom it waited on."""
        row = {"rank": self.rank, "returncode": self.returncode, "seconds": self.seconds,
               "status": capture.script.get("status"), "failing_graphs": [g.index for g in capture.failing],
               "message": capture.script.get("message") or capture.script.get("type") or ""}
        if self.waiting and chosen != self.rank:
            how = f"its collective failed ({row['message'][:100]})" if self.lost_peer else \
                f"ended by the job ({self.ended_by})"
            row["status"], row["message"] = "waiting", f"waiting on rank {chosen}: {how}"
        elif self.ended_by is not None:
            row["status"], row["message"] = "waiting", (f"ended by the job ({self.ended_by}) when it ran past "
                                                        f"its timeout, or on after its peers had ended")
        return row


PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "DistBackendError", "DistNetworkError")


def mark_lost_peers(ranks: list[RankOutcome], captures: dict) -> None:
    """A rank that raised only because a peer left the collective it was in is waiting, not failing."""
    for r in ranks:
        script = captures[r.rank].script
        text = f"{script.get('type', '')} {script.get('message', '')}"
        r.lost_peer = script.get("status") == "error" and any(words in text for words in PEER_LOST)


def read_outcome(rank_dir: Path, timed_out: bool) -> RankOutcome:
    """rank_R/outcome.json (written by compiler.rank_capture); a rank that wrote none was killed."""
    rank = int(rank_dir.name.split("_")[1])
    info = _json(rank_dir / "rank.json")
    data = _json(rank_dir / "outcome.json")
    if not data:
        return RankOutcome(rank, None, "SIGKILL", None, info.get("world_size", 1))
    ended_by = data.get("ended_by")
    code = None if ended_by else data.get("returncode")
    if ended_by and not timed_out and data.get("returncode") == 0:  # it had finished its work already
        code, ended_by = 0, None
    return RankOutcome(rank, code, ended_by, data.get("seconds"), info.get("world_size", 1))


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def choose_rank(ranks: list[RankOutcome], captures: dict) -> int:
    """The rank whose failure is the job's (see the module's docstring)."""
    for r in ranks:
        if captures[r.rank].failing:
            return r.rank
    for r in ranks:
        if not r.waiting and (r.returncode not in (0, None) or captures[r.rank].script.get("status") != "ok"):
            return r.rank
    return next((r.rank for r in ranks if not r.waiting), ranks[0].rank)  # one that ended well by itself



def forget_ending(capture) -> None:
    """A rank the job ended: the graph it was in then is no failure of its own (read_capture
    names it the culprit of a crash or hang); only what its graphs' own checks found stays."""
    for g in capture.graphs:
        g.failure = g.record.get("failure")
    capture.script.update(status="waiting")


def rank_words(script: dict) -> str:
    """` rank R of N` for a distributed job's capture (its `script`), else nothing: repro.py's
    header and the summary name the failing rank so."""
    if "ranks" not in script:
        return ""
    return f" rank {script['rank']} of {len(script['ranks'])}"
