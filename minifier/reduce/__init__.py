"""Delta reduction of one failing graph: the ddmin core, the passes (one file each), validation of
candidates before they run, scoring, budget and checkpoints; the evaluator answers each candidate.
May import: graph, workers
"""
