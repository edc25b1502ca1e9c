"""One whole run: the pipeline that strings the stages together, and what a stopped run leaves."""
