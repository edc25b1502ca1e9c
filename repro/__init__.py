"""Artifacts: saved inputs, repro scripts, regression tests, replay and verification."""
