"""The per-graph search: confirm a graph's failure, find its stage and divergence, reduce it, mask
the bug found and look again, until the graph holds no more bugs.
May import: graph, localize, phases, reduce, workers
"""
