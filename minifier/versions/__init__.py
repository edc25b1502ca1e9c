"""`minify versions`: the torch versions a verified repro fails on (the regression window),
and the commit that broke it where the change is in torch's Python (docs/versions.md).
May import: exit_codes
"""
