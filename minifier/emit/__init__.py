"""The last stage: each reduced bug as a repro folder (repro.py, inputs, manifest), verified in a
fresh process and blamed on a part of the compiler.
May import: blame, capture, distributed, graph, phases, search, start, workers
"""
