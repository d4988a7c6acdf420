"""A candidate's base score: its relevance (the arms, fused) lifted by the signals that
are the memory's own: the question's dates, its speaker, its entities and topics, its
importance and its age. Support from other memories (neighbours, links) and the speaker
rule come later, as a bonus on top."""

from __future__ import annotations

from django.utils import timezone

from .candidates import Candidate, Question, fetch
from . import dates
from .dates import date_signal
from .speaker import own_words_bonus

# Weights of the hybrid ranking, tuned on the LoCoMo dev set (manage.py evaluate) and on
# the hand-made stores in tests/test_recall.py (the other signals' weights are in their modules).
W_ENTITY = 0.08  # per question word that is one of the memory's entities or topics
MAX_ENTITY_BONUS = 0.2
IMPORTANCE_SPAN = 0.3  # importance 0 -> x0.85, 0.5 -> x1.0, 1 -> x1.15
W_RECENT = 0.05
RECENT_HALF_LIFE_DAYS = 365


def base_score(c: Candidate, q: Question) -> None:
    score = c.relevance
    if q.spans:
        gain, c.date_reason = date_signal(q.spans, c.day or timezone.localtime(c.occurred_at).date(), c.events)
        score += gain
    elif q.asks_time and c.events:
        # "When did Ann...?" is answered by the line that dates what she did ("... last Friday").
        score += dates.W_DATED
        if dates.DATED_LIFT and (
            not dates.DATED_TENSE or not q.tense or q.tense in dates.told_as(c.events, timezone.localtime(c.occurred_at).date())
        ):
            score *= 1 + dates.DATED_LIFT
    score += own_words_bonus(c.speaker, q.speakers)
    shared = q.stems & c.keys
    if shared:
        score += min(MAX_ENTITY_BONUS, W_ENTITY * len(shared))
    score *= 1 - IMPORTANCE_SPAN / 2 + IMPORTANCE_SPAN * min(1.0, max(0.0, c.importance))
    age_days = max(0.0, (q.now - c.occurred_at).total_seconds() / 86400)
    score += W_RECENT * 0.5 ** (age_days / RECENT_HALF_LIFE_DAYS)
    c.base = score


def fetch_scored(owner, ids, q: Question) -> dict[int, Candidate]:
    """The owner's readable memories among `ids`, as candidates with their base score."""
    fetched = fetch(owner, ids, dates=q.reads_dates, read=q.read)
    for c in fetched.values():
        base_score(c, q)
    return fetched
