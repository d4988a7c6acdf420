"""Fusion of the arms: one relevance per memory from the lexical and the meaning arm."""

from __future__ import annotations

from collections import defaultdict

# Each arm's list counts by rank (reciprocal-rank fusion).
RRF_K = 10  # a smaller k trusts the first ranks of each arm more
W_LEXICAL_ARM = 1.0
W_MEANING_ARM = 1.0


def fuse(lexical: dict[int, float], meaning: list[tuple[int, float]]) -> dict[int, float]:
    """One relevance per memory from the two arms, by rank (reciprocal-rank fusion): bm25
    and cosine are on scales that cannot be added (bm25 is unbounded and grows with the
    store; e5's cosines crowd between 0.7 and 0.9). Scaled so a memory first in both arms
    scores 1, as the best lexical match does when there is no meaning arm.

    With no meaning arm, the lexical relevance is returned as it is: recall with
    embeddings off ranks exactly as it did before they existed."""
    if not meaning:
        return lexical
    lex_rank = {pk: i for i, pk in enumerate(sorted(lexical, key=lambda pk: -lexical[pk]))}
    top = (W_LEXICAL_ARM + W_MEANING_ARM) / (RRF_K + 1)
    out: dict[int, float] = defaultdict(float)
    for pk, rank in lex_rank.items():
        out[pk] += W_LEXICAL_ARM / (RRF_K + rank + 1)
    for rank, (pk, _) in enumerate(meaning):
        out[pk] += W_MEANING_ARM / (RRF_K + rank + 1)
    return {pk: value / top for pk, value in out.items()}
