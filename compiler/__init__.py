"""The compiler under test: its stages, graph capture, kernels, planted bugs and subsystem switches,
and the judge of a run (oracle, failure signatures). The only package that uses private torch
APIs; it imports nothing of this project's other packages."""
