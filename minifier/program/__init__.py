"""Failures that no single graph shows alone: graphs that fail only when compiled together.
May import compiler/, repro/, minifier.workers and minifier.localize."""
