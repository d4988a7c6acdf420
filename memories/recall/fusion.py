"""Fusion of the arms: one relevance per memory from the lexical and the meaning arm."""

from __future__ import annotations

# The meaning arm lends each memory it finds a credit by its rank, added to the lexical
# relevance (see fuse). Chosen on LoCoMo by folds: picked on two conversations, checked on
# the third, all three ways; reciprocal-rank fusion of both arms (k 10 or 60, weights 0.5
# or 1) lost one to eight points at k=5 in every fold, this lost none.
MEANING_RANK_K = 10  # a smaller k trusts the arm's first ranks more
W_MEANING_ARM = 0.5  # the credit of the arm's first rank, against the best word match's 1
# The latent-terms arm (recall/latent_terms.py) lends a credit by rank the same way.
TERMS_RANK_K = 10
W_TERMS_ARM = 0.25


def fuse(
    lexical: dict[int, float],
    meaning: list[tuple[int, float]],
    unseen: frozenset[int] = frozenset(),
    terms: list[tuple[int, float]] = (),
    terms_unseen: frozenset[int] = frozenset(),
) -> dict[int, float]:
    """One relevance per memory from the two arms. The lexical arm's relevance is kept as
    it is (bm25 over the best match's bm25: a share within this question, so it keeps how
    far the best match stands above the rest); the meaning arm counts by rank only, as
    cosines cannot be read on that scale (bm25 is unbounded; e5's cosines crowd between
    0.7 and 0.9). Scaled so a memory first in both arms scores 1, as the best lexical
    match does when there is no meaning arm.

    With no meaning arm, the lexical relevance is returned as it is: recall with
    embeddings off ranks exactly as it did before they existed. So is that of a memory
    the meaning arm could not see (`unseen`: no vector of the active model yet, as a
    memory added a moment ago, whose vector follows in the background): judged by its
    words alone, on the scale of a memory both arms found. Scaled down with the rest, a
    just-added memory fell from 1st to about 10th for its own words among 1,000 until its
    vector came (tests/test_vectors.py).

    The latent-terms arm (`terms`, best first) adds its credit by rank as the meaning arm
    does, and a memory it cannot see yet (`terms_unseen`) is judged without it."""
    if not meaning and not terms:
        return lexical
    out = dict(lexical)
    for rank, (pk, _) in enumerate(meaning):
        out[pk] = out.get(pk, 0.0) + W_MEANING_ARM * (MEANING_RANK_K + 1) / (MEANING_RANK_K + rank + 1)
    w_terms = W_TERMS_ARM if terms else 0.0
    for rank, (pk, _) in enumerate(terms):
        out[pk] = out.get(pk, 0.0) + w_terms * (TERMS_RANK_K + 1) / (TERMS_RANK_K + rank + 1)
    w_meaning = W_MEANING_ARM if meaning else 0.0
    return {
        pk: value / (1 + (0.0 if pk in unseen else w_meaning) + (0.0 if pk in terms_unseen else w_terms))
        for pk, value in out.items()
    }
