"""Pseudo-relevance feedback: the key words of the best matches, searched for again."""

from __future__ import annotations

from collections import defaultdict

from ..textutil import fold
from . import lexical
from .candidates import Candidate, Question, fetch
from .scoring import base_score
from .words import cached_stem, json_words, words_of

FEEDBACK_DOCS = 10  # best matches whose key words (topics) are searched for again (0: off)
FEEDBACK_TERMS = 5  # ... that many of them, those of the best-scored matches first
FEEDBACK_POOL = 50  # feedback finds considered
W_FEEDBACK = 0.5  # a feedback find's relevance, relative to a direct match's


def expand(owner, candidates: dict[int, Candidate], q: Question) -> list[str]:
    """The key words of the best matches stand for what the question means but does not
    say ("exercises" finds "yoga" and "kickboxing" once the best match mentions them).
    They are searched for in a second pass, whose finds join `candidates` as weaker
    matches (W_FEEDBACK); a memory both passes found keeps the better of its two
    relevances. Returns the words searched for."""
    if not FEEDBACK_DOCS:
        return []
    best = sorted((c for c in candidates.values() if c.relevance > 0), key=lambda c: -c.base)[:FEEDBACK_DOCS]
    weight: dict[str, float] = defaultdict(float)
    for c in best:
        # A match lends its weight to its key words as a share, as a relevance model
        # does: a memory with many key words does not outvote one with few.
        words = words_of(json_words(c.topics))
        for w in words:
            if cached_stem(fold(w)) not in q.stems:
                weight[w] += c.base / len(words)
    expansion = sorted(weight, key=lambda w: -weight[w])[:FEEDBACK_TERMS]
    if not expansion:
        return []
    more = lexical.relevance(owner, expansion, FEEDBACK_POOL, q.read)
    candidates.update(fetch(owner, more.keys() - candidates.keys(), dates=q.reads_dates, read=q.read))
    for pk, r in more.items():
        c = candidates.get(pk)
        if c is not None and W_FEEDBACK * r > c.relevance:
            c.relevance, c.via_feedback = W_FEEDBACK * r, True
            base_score(c, q)
    return expansion
