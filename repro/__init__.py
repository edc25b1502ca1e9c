"""Artifacts: saved inputs, repro scripts, regression tests, issue text, replay and verification.
May import compiler/; never minifier/."""
