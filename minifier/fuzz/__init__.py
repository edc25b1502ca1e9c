"""Hypothesis fuzzing of Inductor's lowerings: strategies drawn from OpInfo, the campaign, and
pytest targets. May import compiler/, repro/, minifier.workers and the pipeline (to minify findings)."""
