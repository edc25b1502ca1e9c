"""The exit statuses of every minify command (minify, bisect, fuzz), in one place: scripts and CI
read them, so one number means one thing everywhere."""

EXIT_OK = 0  # minify: reproduced and verified; bisect: blamed; fuzz: nothing failed
EXIT_FOUND = 1  # fuzz: failures found, each reproduced
EXIT_BAD_INPUT = 2  # bad arguments, script or repro folder
EXIT_NOTHING_FAILED = 3  # minify: no graph and no end-to-end run failed
EXIT_NOT_REPRODUCED = 4  # a failure that did not reproduce (or a repro that did not verify)
EXIT_NUMERICS = 5  # minify: compiled differs from eager only as floating-point numerics do (evidence in the report)
EXIT_INTERRUPTED = 130  # Ctrl-C
