"""The search: capture and localize -> reduce -> emit, one subpackage per stage, with the CLI,
the pipeline that strings the stages together and the benchmark at the top (and exit_codes, the
statuses every command shares). May import repro/ and compiler/; nothing below imports this package."""
