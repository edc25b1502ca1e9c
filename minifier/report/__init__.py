"""What a person reads: the console summary, the HTML report, a bug's report.json row and blame's
findings in words.
May import: blame, distributed, graph, search, workers
"""
