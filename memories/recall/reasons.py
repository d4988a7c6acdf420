"""Why a memory was picked, in words a person (and the model) can check."""

from __future__ import annotations

from ..models import Memory
from ..textutil import fold
from .candidates import Candidate
from .meaning import MEANING_REASON_RANKS
from .words import cached_stem, matched_words, word_matcher

IMPORTANT = 0.7  # importance from which "important" is given as a reason


class Explainer:
    """The reasons of each chosen memory of one question."""

    def __init__(self, q_words: list[str], expansion: list[str], *, fallback: bool):
        self.q_words = q_words
        self.q_stems = {cached_stem(fold(w)) for w in q_words}
        self.matcher, self.feedback_matcher = word_matcher(q_words), word_matcher(expansion)
        self.fallback = fallback

    def reasons(self, c: Candidate, memory: Memory) -> list[str]:
        reasons = []
        # A feedback find may hold question words too (its direct match was just weaker).
        matched = matched_words(memory, self.matcher) if c.lexical or c.via_feedback else []
        if matched:
            reasons.append("matches " + ", ".join(f"'{w}'" for w in matched))
        if c.via_feedback:
            shared = ", ".join(f"'{w}'" for w in matched_words(memory, self.feedback_matcher))
            reasons.append(f"shares {shared} with the best matches" if shared else "shares words with the best matches")
        elif c.lexical and not matched:
            reasons.append("matches the question")
        if c.meaning_rank is not None and c.meaning_rank < MEANING_REASON_RANKS:
            reasons.append("close in meaning to the question")
        reasons.extend(r for r in (c.date_reason, *c.reasons) if r)
        if c.keys & self.q_stems:
            reasons.append("about " + ", ".join(f"'{w}'" for w in self.q_words if cached_stem(fold(w)) in c.keys)[:100])
        if memory.importance >= IMPORTANT:
            reasons.append(f"important ({memory.importance:.1f})")
        if self.fallback:
            reasons.append("recent")
        return reasons
