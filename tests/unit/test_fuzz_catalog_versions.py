"""The fuzzer's op catalog on an older OpInfo: torch 2.11's has no `has_nondeterministic_output`
(minify fuzz ended in an AttributeError there, on the H200 machines); the catalog must be the same."""
from minifier.fuzz.op_catalog import _entry, op_db


class OlderOpInfo:
    """An OpInfo as torch 2.11 has it: without has_nondeterministic_output."""

    def __init__(self, info):
        self._info = info

    def __getattr__(self, name):
        if name == "has_nondeterministic_output":
            raise AttributeError(name)
        return getattr(self._info, name)


def _names(infos) -> set:
    return {e.name for e in map(_entry, infos) if e is not None}


def test_the_catalog_is_the_same_without_has_nondeterministic_output():
    db = op_db()
    now = _names(db)
    assert now and _names(OlderOpInfo(i) for i in db) == now
    assert not {"empty_like", "new_empty"} & now
