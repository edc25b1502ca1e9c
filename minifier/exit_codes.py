"""The exit statuses of every minify command (minify, replay, bisect, fuzz, bench), in one place:
scripts and CI read them, so one number means one thing everywhere. `minify --help` prints
EXIT_CODES and the README's "Exit codes" section says the same (tests/integration/test_cli_help.py checks it).

1 is what a generated repro.py says when its bug reproduces (as a failing test does), so it means
"the bug is there" for every command that answers that: `replay` and `fuzz`. minify's own failure
has a number of its own (70, sysexits' EX_SOFTWARE), never taken for a finding."""

EXIT_OK = 0  # minify: reproduced and verified; bisect: blamed; fuzz: nothing failed; replay: not reproduced
EXIT_FOUND = 1  # replay: the repro reproduces; fuzz: failures found, each reproduced
EXIT_BAD_INPUT = 2  # bad arguments, script or repro folder; a repro that cannot run
EXIT_NOTHING_FAILED = 3  # minify: no graph and no end-to-end run failed
EXIT_NOT_REPRODUCED = 4  # a failure that did not reproduce (or a repro that did not verify)
EXIT_NUMERICS = 5  # minify: compiled differs from eager only as floating-point numerics do
EXIT_CANNOT_WRITE = 6  # the output folder cannot be written
EXIT_WRONG_ANSWERS = 7  # bench: a case's answer was not the expected one
EXIT_MAX_TIME = 8  # minify: --max-time ran out while the script ran, before anything was searched
EXIT_UNSUPPORTED = 9  # minify: an AOTInductor package's failure minify could not reduce
EXIT_INTERNAL = 70  # a bug in minify itself (the line names the log)
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2, as a shell reports a process a signal ended
EXIT_TERMINATED = 143  # SIGTERM (a batch system's stop): 128 + 15

# What each exit status of every command means.
EXIT_CODES = {
    EXIT_OK: "success: minify wrote a verified repro (other findings whose repros did not verify are listed as "
             "such); bisect blamed a compiler part; fuzz found nothing; "
             "replay: the repro ran and did not reproduce; versions found the window (or the first bad commit); batch: every "
             "script got a verified repro",
    EXIT_FOUND: "the bug is there: replay (repro.py reproduces, as it says itself with exit 1) and fuzz "
                "(failures found, each reproduced); minify SCRIPT never ends with 1",
    EXIT_BAD_INPUT: "bad input: a missing file, a syntax error, a bad option, a script that fails without the "
                    "compiler too, a custom op of the script's defined wrongly (a fake that disagrees with the op, an "
                    "input written that mutates_args does not declare), "
                    "an output folder that holds another run or files of yours, a folder in use by "
                    "another run, a repro folder that cannot run (a damaged inputs.pt), a cluster address that cannot be reached; "
                    "nothing was changed",
    EXIT_NOTHING_FAILED: "nothing failed: every compiled graph matched eager, and so did the whole program",
    EXIT_NOT_REPRODUCED: "a failure was seen but did not reproduce, or no repro verified; versions: no window (no "
                         "version reproduced it or could run it, or the outcomes alternate; a bisection left a range); batch: some "
                         "script's minify ended otherwise than 0 (batch.json gives each one's own status)",
    EXIT_NUMERICS: "numerics, not a miscompile: compiled differs from eager only as floating-point rounding does "
                   "(one graph alone is enough and it passes every check of the oracle; the report gives each "
                   "one's error against fp64, and a setting that makes them match only when seen to)",
    EXIT_CANNOT_WRITE: "the output folder cannot be written (not writable, disk full); the line names the path",
    EXIT_WRONG_ANSWERS: "bench: some case's answer was not the expected one",
    EXIT_MAX_TIME: "--max-time ran out while the script still ran: the script was ended and nothing was searched; "
                   "report.json says how far it got",
    EXIT_UNSUPPORTED: "not supported: the failure is in an AOTInductor package (aoti_compile_and_package) "
                      "whose exported graph minify could not reduce (it does not fail again replayed alone, with "
                      "any torch.cond flattened to the branch taken; or a loop too long to unroll), or in a package the script did not compile; the line "
                      "says what failed and where the exported program and its inputs are saved, and no bug "
                      "verdict is given",
    EXIT_INTERNAL: "minify itself failed (a bug in minify); the one line names the log that holds the traceback",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): stopped within seconds; what was verified so far is kept, report.json "
                      "says where it stopped, and --resume continues",
    EXIT_TERMINATED: "terminated (SIGTERM, as a batch system sends): the same orderly stop as Ctrl-C",
}
