"""The last stage: each reduced bug as a repro folder (repro.py, inputs, manifest), verified in a
fresh process and blamed on a part of the compiler. May import compiler/, repro/, minifier.workers,
minifier.localize's capture records, minifier.reduce's bugs and graph edits, and minifier.blame."""
