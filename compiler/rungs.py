"""The rungs of the oracle's ladder (compiler/ladder.py), by name; no torch here, so the command
line can check `--ignore` before the capture starts."""

RUNGS = ("exception", "meta", "nan_inf", "values", "exact", "signed_zero", "layout", "bitwise")
RUNG_WORDS = {
    "exception": "compiling or running the compiled code raises",
    "meta": "shape, dtype or device differs from eager",
    "nan_inf": "NaN/Inf where eager has a finite value, or the reverse",
    "values": "values differ from eager beyond tolerance (integers: at all), and further from fp64 than eager",
    "exact": "a value-selecting op (min, max, where, gather, sort...) returns a value none of its inputs has",
    "signed_zero": "the sign of a zero differs where eager is exact",
    "layout": "strides, storage offset or aliasing of an input differ from eager",
    "bitwise": "bits differ from eager (--strict)",
}
# What `--ignore` accepts: the rungs a user may turn off.
IGNORABLE = {"signed-zero": "signed_zero", "layout": "layout"}


def parse_ignore(values) -> tuple:
    """`--ignore signed-zero,layout` (commas or spaces, repeatable) -> rung names. Raises
    ValueError naming what it does not know."""
    if isinstance(values, str):
        values = [values]
    names = [n for v in values or () for n in v.replace(",", " ").split()]
    unknown = [n for n in names if n.replace("_", "-") not in IGNORABLE]
    if unknown:
        raise ValueError(f"cannot ignore {', '.join(map(repr, unknown))}: choose from {', '.join(IGNORABLE)}")
    return tuple(dict.fromkeys(IGNORABLE[n.replace("_", "-")] for n in names))
