"""The full-text arm: the owner's memories that hold the question's words (search.py)."""

from __future__ import annotations

from . import search


def relevance(owner, query: list[str], pool: int, read: dict | None = None) -> dict[int, float]:
    """Lexical relevance of the owner's best matches, scaled so the best is 1. read: where
    the rows the search read are kept, for the candidates' fetch (candidates.fetch)."""
    hits = search.lexical_search(owner=owner, query=query, limit=pool, read=read)
    top = max((h.score for h in hits), default=0.0)
    return {h.memory_id: (h.score / top if top > 0 else 0.0) for h in hits}
