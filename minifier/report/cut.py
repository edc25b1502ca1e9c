"""Text shortened for a table cell or a note: cut at a word boundary, never mid-word, and
saying how much was left out."""
from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its first words up to about `limit`, then
    "… (N more characters)"."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", 0, limit + 1)
    kept = text[:space if space > limit // 2 else limit].rstrip(" ,;:")
    return f"{kept} … ({len(text) - len(kept)} more characters)"
