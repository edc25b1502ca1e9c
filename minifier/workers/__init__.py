"""Warm processes that answer questions about graphs: the zygote that forks them, the pool, the
worker loop and its protocol, the worker-side divergence job, and the Evaluator that asks them.
May import: graph
"""
