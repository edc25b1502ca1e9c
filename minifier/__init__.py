"""The search: oracles and failure signatures, localization, reduction, workers, CLI, reports."""
