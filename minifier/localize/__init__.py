"""Which captured graph fails, at which stage, and at which nodes: the first checks while the
capture runs, the pieces of a graph, the divergence search, and localization for the report.
May import: capture, graph, reduce, workers
"""
