"""Delta reduction of one failing graph: the ddmin core, the passes (one file each), validation of
candidates before they run, scoring, budget and checkpoints. May import compiler/, repro/ and
minifier.workers (the evaluator that answers each candidate)."""
