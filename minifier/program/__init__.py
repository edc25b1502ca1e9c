"""Failures that no single graph shows alone: graphs that fail only when compiled together.
May import: capture, exit_codes, graph, localize, reduce, report, search, start, workers
"""
