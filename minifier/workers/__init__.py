"""Warm processes that answer questions about graphs: the zygote that forks them, the one supply
of warm interpreters (workers and repro.py's verifier alike), the pool, the
worker loop and its protocol, the worker-side divergence job, the Asker that asks them, the Judge that
reads their Answers, and the Evaluator that does both.
May import: graph
"""
