"""Ready-made fuzz targets for Inductor as pytest tests, one per family of ops, to run at scale on
existing engines: pytest-xdist spreads them over processes (`-n auto`), HypoFuzz runs them as a
fuzzer (`hypothesis fuzz`), and all share one example database, so a failure found by one run is
replayed first by every later one:

    MINIFY_FUZZ_DB=.minify-fuzz-db python -m pytest -n auto minifier/fuzz/targets.py
    MINIFY_FUZZ_DB=.minify-fuzz-db hypothesis fuzz -- minifier/fuzz/targets.py

MINIFY_FUZZ_DB names the database folder (default `.minify-fuzz-db` in the current directory);
MINIFY_FUZZ_REDIS=redis://host:6379/0 uses hypothesis's Redis database instead, for machines that
share no folder. MINIFY_FUZZ_EXAMPLES sets examples per target for pytest (default 50).
Known failures are masked with MINIFY_FUZZ_MASK (comma-separated ops, signature prefixes or
fuzz.json keys, or rungs), e.g. `MINIFY_FUZZ_MASK=signed_zero,layout` to leave out the rungs many users
do not care about. A failure is an AssertionError naming the rung and showing the shrunk program;
`minify fuzz --replay --db DIR` or `minify` on a script calling it turns it into a verified repro.
"""
from __future__ import annotations

import os

from minifier.fuzz.pytest_targets import fuzz_test


def database():
    """The shared example database named by the environment."""
    from hypothesis.database import DirectoryBasedExampleDatabase

    url = os.environ.get("MINIFY_FUZZ_REDIS")
    if url:
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError as exc:
            raise RuntimeError("MINIFY_FUZZ_REDIS needs redis: pip install 'hypothesis[redis]'") from exc

        return RedisExampleDatabase(redis.Redis.from_url(url))
    return DirectoryBasedExampleDatabase(os.environ.get("MINIFY_FUZZ_DB", ".minify-fuzz-db"))


def _shared_database():
    """The database, made hypothesis's default too: HypoFuzz fuzzes only tests whose database is
    the default profile's (any other it leaves out, as `differing_database`)."""
    from hypothesis import settings

    db = database()
    settings.register_profile("minify-fuzz-targets", database=db)
    settings.load_profile("minify-fuzz-targets")
    return db


DATABASE = _shared_database()


def _target(ops: list[str] | None, **kwargs):
    masks = [m for m in os.environ.get("MINIFY_FUZZ_MASK", "").split(",") if m]
    return fuzz_test(ops=ops, max_examples=int(os.environ.get("MINIFY_FUZZ_EXAMPLES", "50")), masks=masks,
                     allow_nonfinite=True, database=DATABASE, **kwargs)


POINTWISE = ["abs", "neg", "sign", "floor", "ceil", "round", "trunc", "frac", "sqrt", "rsqrt", "exp", "log", "log1p",
             "sigmoid", "tanh", "nn.functional.relu", "nn.functional.gelu", "reciprocal",
             "bitwise_not", "logical_not", "clamp_min", "clamp_max"]
BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "maximum", "minimum", "fmax",
          "fmin", "atan2", "copysign", "bitwise_and", "bitwise_xor", "eq", "lt", "logical_and", "where"]
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "max.reduction_with_dim",
              "min.reduction_with_dim", "var", "std", "var_mean", "logsumexp", "any", "all", "nansum", "cumsum"]
INDEXING = ["cat", "index_select", "gather", "take_along_dim", "flip", "roll", "constant_pad_nd", "select_scatter",
            "slice_scatter", "index_add", "masked_fill", "repeat_interleave", "tril", "triu"]

test_pointwise = _target(POINTWISE)
test_binary = _target(BINARY)
test_reductions = _target(REDUCTIONS)
test_indexing = _target(INDEXING)
test_any_op = _target(None)
