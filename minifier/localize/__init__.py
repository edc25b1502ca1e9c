"""Which captured graph fails, at which stage, and at which nodes: the capture run, the
per-graph verdicts and the divergence search. May import compiler/, repro/, minifier.workers
and minifier.reduce's graph edits and shortest-failing-prefix search."""
