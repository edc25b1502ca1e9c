"""The search, as a one-way stack of folders (bottom to top: graph, workers, reduce/capture/blame,
localize/start, search, report, emit/program, run, fuzz/bench/versions; tests/test_layout.py's
FOLDER_ORDER), with the entry points (cli, bisect) at the top and exit_codes and phases, which
every floor may use, at the bottom. May import repro/ and compiler/; nothing below imports this package."""
