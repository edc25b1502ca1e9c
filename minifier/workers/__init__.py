"""Warm processes that answer questions about graphs: the zygote that forks them, the pool, the
worker loop and its protocol, and the Evaluator that asks them. May import compiler/, repro/,
minifier.reduce's graph edits and minifier.localize's worker-side divergence job."""
