"""`minify batch`: many failing scripts minified, one task each, locally or on a Dask cluster, each
into its own output folder, with one summary (batch.json and a console table).
May import: exit_codes, report, start
"""
