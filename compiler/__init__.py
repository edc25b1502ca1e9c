"""Everything that touches torch.compile internals (the only package using private APIs)."""
