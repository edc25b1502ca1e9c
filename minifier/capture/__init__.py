"""The capture process on the user's script, and what it recorded: each graph as a module with
its real inputs and every value it computes on them.
May import: distributed, graph, workers
"""
