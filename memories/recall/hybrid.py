"""The hybrid strategy: the arms find candidates, fusion gives each one relevance, the
signals re-rank them, and the budget decides what the model reads. Each step is its own
module; this one only puts them in order."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from . import current
from ..textutil import fold
from . import digests, feedback, latent_terms, lexical, meaning, neighbours, newer, sessions, speaker
from .budget import within_budget
from .candidates import Question, fetch, newest
from .consolidations import for_recalled
from .dates import TIME_UNITS, asks_time, date_phrases, date_pool, date_spans, time_asked
from .fusion import fuse
from .lexical_query import query_words
from .reasons import Explainer
from .result import RecallResult, Recalled
from .scoring import base_score, fetch_scored
from .words import cached_stem


DROP_TIME_UNITS = True
EMPTY_DATES_AS_WORDS = True
# A speaker's name as a word of the question (issue 31): every line of hers opens with it,
# so it matches half a conversation, her shortest lines best ("Bye!"), and for "What did
# Ann do on 10 July?" that ranking buried the line that dates what she did. The speaker
# rule (speaker.py) and the entity signal still read the name. 2: searched as a word
# always; 1: not when the question names a date; 0: never.
SPEAKER_NAMES_AS_WORDS = 1
# The same for a question that asks for a time ("When did Tom injure his back?"): searched
# as a word, the name ranks Tom's shortest lines ("Tom: Oh fun!") above the one that tells
# what he did when the question names little else. False: not searched (as for a question
# that names a date). Measured by folds on LoCoMo dev (round 16, issue-recall9): no fold
# gained at k = 10 or 50, conv-26 lost one question's share at k = 5, and without the
# name's even credit to every mention the dated one no longer overtook a later mention
# with more of the question's words (tests/test_recall_when.py). Off: True.
NAMES_AS_WORDS_WHEN_TIME_ASKED = True


def recall_hybrid(*, owner, question: str, k: int, now: datetime | None = None) -> RecallResult:
    now = now or timezone.now()
    today = timezone.localdate(now)
    meaning_arm = meaning.MeaningArm.begin(owner, question)  # the question is embedded meanwhile
    terms_arm = latent_terms.TermsArm.begin(owner, question)  # and its latent terms computed and searched
    spans = date_spans(question or "", today=today)
    # The period asked about, even when no memory is dated in it: a fact said before it
    # and replaced after it held then ("my gym fee in autumn 2023", said in August).
    asked_spans = spans
    by_date = date_pool(owner, spans, k, today) if spans else []
    if not by_date and EMPTY_DATES_AS_WORDS:
        # No memory of the owner's falls in the dates the question names ("last weekend",
        # counted from a today the memories are far from): they are no date to go by, and
        # their words may still be how a memory says it ("... last weekend").
        spans = []
    # Words that only name a date ("May", "2023") would match the text of unrelated
    # memories; the date signal handles them.
    date_words = {w for s in spans for w in query_words(s.label)} | set(
        query_words(" ".join(date_phrases(question))) if spans else ()
    )
    wants_time = asks_time(question)
    if wants_time and DROP_TIME_UNITS:
        # "In which month did Ann move?": the month is what is asked, not a word of the answer.
        date_words |= TIME_UNITS
    q_words = [w for w in query_words(question) if w not in date_words]
    q_stems = {cached_stem(fold(w)) for w in q_words}
    pool = max(150, 4 * k)

    q = Question(q_stems, spans, now, asks_time=wants_time, tense=time_asked(question) if wants_time else "")
    dated = bool(spans) or (wants_time and not NAMES_AS_WORDS_WHEN_TIME_ASKED)
    by_words = lexical.relevance(owner, _searched_words(owner, q_words, dated=dated), pool, q.read)
    # What the words and dates found is read while the question is still being embedded.
    early = (
        fetch(owner, by_words.keys() | set(by_date), dates=q.reads_dates, read=q.read) if meaning_arm.vector is not None else {}
    )
    by_meaning = meaning_arm.nearest(meaning.MEANING_POOL)
    by_terms = terms_arm.nearest()
    relevance = fuse(
        by_words,
        by_meaning,
        meaning_arm.unseen(by_words.keys() - {pk for pk, _ in by_meaning}),
        by_terms,
        terms_arm.unseen((by_words.keys() | {pk for pk, _ in by_meaning}) - {pk for pk, _ in by_terms}),
    )
    by_digest = (
        digests.sources(
            owner, vector=meaning_arm.question_vector(), model=meaning_arm.embedder.model, q_stems=q_stems, found=relevance.keys()
        )
        if meaning_arm.vector is not None
        else {}
    )
    if by_digest:
        relevance = dict(relevance)  # fuse may hand back the lexical arm's own dict
    for pk, (credit, _) in by_digest.items():
        relevance[pk] = relevance.get(pk, 0.0) + credit
    ids = set(relevance) | set(by_date)
    fallback = not ids
    if fallback:
        # Nothing to match on (or nothing matched): the newest and the most important.
        ids.update(newest(owner, pool, "created_at DESC, id DESC"))
        ids.update(newest(owner, k, "importance DESC, id DESC"))

    found = {pk: c for pk, c in early.items() if pk in ids} | fetch(owner, ids - early.keys(), dates=q.reads_dates, read=q.read)
    candidates = dict(sorted(found.items()))  # in id order, as one read gave them (ties keep an order)
    q.speakers = frozenset(c.speaker for c in candidates.values() if c.speaker in q_stems)
    meaning_rank = {pk: i for i, (pk, _) in enumerate(by_meaning)}
    for c in candidates.values():
        c.relevance = relevance.get(c.id, 0.0)
        c.lexical = c.id in by_words
        c.meaning_rank = meaning_rank.get(c.id)
        if c.id in by_digest:
            c.reasons.append(by_digest[c.id][1])
        base_score(c, q)
    expansion = feedback.expand(owner, candidates, q) if by_words else []

    seeds = neighbours.seeds_of(candidates)
    near = neighbours.around(owner, seeds)
    linked = neighbours.links(seeds)
    candidates.update(fetch_scored(owner, neighbours.brought_in(near, linked) - candidates.keys(), q))
    neighbours.lend_support(candidates, seeds, near, linked)
    if q.speakers:
        speaker.prefer_named_speakers(candidates.values(), q.speakers)
    sessions.prefer_best_sessions(candidates.values(), sessions.TIME_W_SESSION if wants_time else None)

    ranked = sorted(candidates.values(), key=lambda c: (-c.score, -c.occurred_at.timestamp(), -c.id))
    if sessions.asks_for_a_set(question):
        ranked = sessions.spread(ranked)
    elif wants_time:
        ranked = sessions.spread(ranked, sessions.TIME_BREADTH_DECAY)
    # What is true now: expired memories out, each superseded one below its successor.
    ranked = current.prefer_current(
        ranked, owner=owner, now=now, spans=asked_spans, fetch=lambda ids: fetch_scored(owner, ids, q)
    )
    # A period gone is asked about even when no memory is dated in it ("Who led Harbour in
    # spring 2024?"): what held then keeps its place above what replaced it.
    past_period = any(s.end is not None and s.end < today for s in asked_spans)
    ranked = newer.newer_first(ranked, owner=owner, question=question, dated=bool(spans) or past_period)
    if spans and max((s.end for s in spans if s.end is not None), default=today) < today:
        ranked = newer.held_then_first(ranked, owner=owner, spans=spans)
    chosen, brief = within_budget(owner, ranked, k)
    explainer = Explainer(q_words, expansion, fallback=fallback)
    recalled = [Recalled(memory, score=round(c.score, 4), reasons=explainer.reasons(c, memory)) for c, memory in chosen]
    consolidations, why = for_recalled(owner, recalled, q_words)
    return RecallResult(
        strategy="hybrid", memories=recalled, consolidations=consolidations, consolidation_reasons=why, brief_ids=brief
    )


def _searched_words(owner, q_words: list[str], *, dated: bool) -> list[str]:
    """The question's words the words arm searches: without its speakers' names, when
    SPEAKER_NAMES_AS_WORDS says so."""
    if SPEAKER_NAMES_AS_WORDS >= 2 or (SPEAKER_NAMES_AS_WORDS == 1 and not dated):
        return q_words
    names = speaker.speakers_of(owner)
    return [w for w in q_words if cached_stem(fold(w)) not in names] if names else q_words
