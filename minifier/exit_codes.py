"""The exit statuses of every minify command (minify, bisect, fuzz), in one place: scripts and CI
read them, so one number means one thing everywhere. `minify --help` prints EXIT_CODES and the
README's "Exit codes" section says the same (tests/test_cli_help.py checks it)."""

EXIT_OK = 0  # minify: reproduced and verified; bisect: blamed; fuzz: nothing failed
EXIT_INTERNAL = 1  # minify: a bug in minify itself (the line names the log)
EXIT_FOUND = 1  # fuzz: failures found, each reproduced
EXIT_BAD_INPUT = 2  # bad arguments, script or repro folder
EXIT_NOTHING_FAILED = 3  # minify: no graph and no end-to-end run failed
EXIT_NOT_REPRODUCED = 4  # a failure that did not reproduce (or a repro that did not verify)
EXIT_NUMERICS = 5  # minify: compiled differs from eager only as floating-point numerics do
EXIT_CANNOT_WRITE = 6  # the output folder cannot be written
EXIT_INTERRUPTED = 130  # Ctrl-C

# What each exit status of `minify SCRIPT` means.
EXIT_CODES = {
    EXIT_OK: "a verified repro was written (other findings whose repros did not verify are listed as such)",
    EXIT_INTERNAL: "minify itself failed (a bug in minify); the one line names the log that holds the traceback",
    EXIT_BAD_INPUT: "bad input: a missing file, a syntax error, a bad option, a script that fails without the "
                    "compiler too, an output folder that holds another run",
    EXIT_NOTHING_FAILED: "nothing failed: every compiled graph matched eager, and so did the whole program",
    EXIT_NOT_REPRODUCED: "a failure was seen but did not reproduce, or no repro verified",
    EXIT_NUMERICS: "numerics, not a miscompile: compiled differs from eager only as floating-point rounding does "
                   "(one graph alone is enough and it passes every check of the oracle; the report gives each "
                   "one's error against fp64, and a setting that makes them match only when seen to)",
    EXIT_CANNOT_WRITE: "the output folder cannot be written (not writable, disk full); the line names the path",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); what was found so far is kept and report.json says so",
}
