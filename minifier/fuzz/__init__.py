"""Hypothesis fuzzing of Inductor's lowerings: strategies drawn from OpInfo, the campaign, and
pytest targets. May import compiler/, repro/, minifier.workers, minifier.reduce's
shortest-failing-prefix search and the pipeline (to minify findings)."""
