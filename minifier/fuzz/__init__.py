"""Hypothesis fuzzing of Inductor's lowerings: strategies drawn from OpInfo, the campaign, and
pytest targets; findings are minified by the pipeline.
May import: exit_codes, reduce, report, run, workers
"""
