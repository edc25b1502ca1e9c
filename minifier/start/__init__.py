"""What a run starts from: its options, its output folder, the processes its first second starts,
and the session every stage is handed.
May import: capture, exit_codes, phases, reduce, workers
"""
