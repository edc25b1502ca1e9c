"""One whole run: the pipeline that strings the stages together, and what a stopped run leaves.
May import: capture, distributed, emit, exit_codes, localize, program, reduce, report, search, start, workers
"""
