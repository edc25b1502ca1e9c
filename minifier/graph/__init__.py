"""FX graph helpers every stage shares: edits of a graph (op nodes, rebuild, placeholders), the
transforms of its inputs, and which nodes are observed and stored. Pure FX, at the bottom of the stack.
May import: nothing
"""
