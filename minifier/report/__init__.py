"""What a person reads: the console summary and the HTML report. May import compiler/ and repro/."""
