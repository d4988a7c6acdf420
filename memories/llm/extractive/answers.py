"""The extractive answerer: picks the sentences of the recalled memories that answer the
question and quotes them, each with its [Memory N]. It is not a language model and does
not write; it chooses.

A sentence is scored by how much of the question it covers (words weighted by how rare
they are in the context), how close it is to the question (similarity.py: meaning when an
embedding layer is there, words otherwise), where recall ranked its memory, and by what
the question asks for:

- a question naming a period ("What happened last week?") quotes what recall matched by
  that date, even when it shares no word with the question;
- "what was decided / agreed / planned" prefers decision sentences;
- who -> sentences naming people; when -> dates (and a relative "yesterday" is resolved
  against the memory's date); where -> places; how many / how much -> numbers.
"""

from __future__ import annotations

import math
import re

import numpy as np
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ... import textutil
from ..base import AnswerContext, MemoryNote
from .entities import AMOUNT_RE, DATE_RE, addressed, extract_entities
from . import similarity, whose
from .summary import plain_text

MAX_QUOTES = 3
# Further quotes must score at least this share of the best one.
KEEP_SHARE = 0.8
MAX_SENTENCES = 4000
# A quoted sentence shorter than this brings the next one of its memory along.
SHORT_SENTENCE_WORDS = 8
NOTHING = "I couldn't find anything about that in your memories."
# How much closer to the question than to a question asking nothing (similarity.Closeness
# margin) a sentence must be to count as about it with no word in common (meaningful only
# with the embedding layer; the lexical similarity needs a shared word). On
# multilingual-e5-small, pairs written for this: related ones -0.045 to +0.06 ("Where do
# I live now?" / "I moved from Paris to Berlin" -0.022), unrelated ones -0.04 to -0.11.
MARGIN_MIN = -0.05
# What a sentence with no word of the question needs to count as answering it: with the
# kind of thing asked for, and without. Twelve notes and sixteen questions written for
# this (8 answerable, 8 not): the answerable ones by meaning alone sit at -0.022 ("Where do
# I live now?" / the move to Berlin), -0.021 ("What is my job?" / "I work as a nurse") and
# -0.007 ("What martial arts do I practice?" / taekwondo), the nearest note to an
# unanswerable one at -0.057 to -0.018, but -0.007 for "my favourite colour" / "my blue
# car" (answered: a margin cannot tell a colour from a favourite colour).
MEANING_TYPED = -0.035
MEANING_UNTYPED = -0.01
MARGIN_SPAN = 0.08
# What a line must hold to answer (answers._stands): at least this share (by rarity) of
# what is asked, names aside, or be this close in meaning (the margin above). Chosen on two
# of LoCoMo dev's conversations (most category-5 questions answered "not found" while the
# answerable ones still cited lose at most 5 points there) and read on the third, all three
# ways: the folds chose 0.4 / -0.04, 0.5 / -0.03 and 0.4 / -0.03; on each held-out
# conversation "not found" 14.9 -> 21.3%, 29.2 -> 41.7%, 19.5 -> 31.7% and cited 89.3 ->
# 87.3%, 92.6 -> 85.2%, 78.3 -> 73.7%.
COVERAGE_MIN = 0.4
MARGIN_MIN_ANSWER = -0.03
# Below this many sentences there is no typical sentence to stand out from.
FEW_SENTENCES = 3

META_TERMS = {
    textutil.stem(w)
    for w in (
        "memory memories know key theme themes summarize summary overview main important recent latest everything stored "
        "store remember tell about note notes connect connects connected link links relate related common thread threads "
        "pattern patterns far lately"
    ).split()
}
QUESTION_WORDS = {
    textutil.stem(w)
    for w in "what when where who whom whose which why how many much long did does do is are was were happen happened".split()
}

_DECISION_Q = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|plan\w*|conclu\w*|resolv\w*|settled|chose|choose|commit\w*|outcome)\b", re.I
)
_DECISION_S = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|will|shall|ships?|launch\w*|owns?|leads?|starts?|deadline|due|by\s+(?:the\s+)?(?:end|[A-Z]\w+\s+\d)|"
    r"capped|approved?|plan(?:s|ned)?\s+to|going\s+to|committed|assigned|next\s+step\w*|action\s+items?)\b",
    re.I,
)
_WHO_Q = re.compile(r"^\s*(?:who|whom|whose)\b|\bwhich\s+(?:person|people|colleague|friend|one)\b", re.I)
_WHEN_Q = re.compile(
    r"^\s*when\b|\bwhat\s+(?:date|day|time|year|month|week)\b|\bhow\s+long\s+ago\b|\bwhich\s+(?:year|month|day)\b", re.I
)
_WHERE_Q = re.compile(r"^\s*where\b|\bwhich\s+(?:city|country|place|town)\b", re.I)
_BROAD_Q = re.compile(
    r"\b(?:know|say|says|said|tell|learn\w*|think|read)\b.{0,80}\babout\b|^\s*(?:summari[sz]e|what\s+about)\b", re.I
)
_COUNT_Q = re.compile(r"\bhow\s+(?:many|much|long|often|old|far)\b", re.I)
_NUMBER = re.compile(
    r"\b\d+(?:[.,]\d+)?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|dozen|once|twice)\b",
    re.I,
)
_PLACE_S = re.compile(r"\b(?:in|at|from|to|near|moved|live[sd]?|living|visit\w*)\s+(?:the\s+)?\w", re.I)

TIME_TERMS = {
    textutil.stem(w)
    for w in (
        "day days week weeks weekend month months year years yesterday today tonight ago last past next this recently "
        "morning evening night spring summer autumn fall winter january february march april may june july august "
        "september october november december monday tuesday wednesday thursday friday saturday sunday happen happened"
    ).split()
}
WEEKDAY_NAMES = [day.lower() for day in textutil.WEEKDAYS]
_NUM_WORDS = {**textutil.NUMBER_WORDS, "few": 3, "couple of": 2}
RELATIVE_RE = re.compile(
    r"\b(?:(yesterday|today|tonight|this\s+morning|this\s+evening|last\s+night)"
    r"|(last|this|next|past)\s+(week|weekend|month|year|summer|winter|spring|fall|autumn|" + "|".join(WEEKDAY_NAMES) + r")"
    r"|(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple\s+of)\s+(day|week|month|year)s?\s+ago)\b",
    re.I,
)


@dataclass
class _Sentence:
    memory: MemoryNote
    rank: int
    text: str
    stems: frozenset
    score: float = 0.0
    relevant: bool = False
    following: str = ""  # the next sentence of the same memory
    coverage: float = 0.0  # the share (by rarity) of what is asked, names aside, its memory holds
    margin: float = -1.0  # how much closer it is to the question than to one asking nothing
    by_date: bool = False


def answer(*, question: str, context: AnswerContext) -> str:
    if not context.memories:
        return "I have no memories to answer from yet."
    q_terms = [t for t in dict.fromkeys(textutil.terms(question)) if t not in META_TERMS and t not in QUESTION_WORDS]
    dated = set(context.date_matches)
    if dated:
        # Recall already read the period ("last week") as a date: its words are not a topic.
        q_terms = [t for t in q_terms if t not in TIME_TERMS and not t.isdigit()]
    if not q_terms and not dated:
        return overview(context)

    sentences = _sentences(context)
    if not sentences:
        return NOTHING
    n = len(sentences)
    df: dict[str, int] = {}
    for s in sentences:
        for t in s.stems:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1 + n / (1 + df.get(t, 0))) for t in q_terms}
    total = sum(idf.values()) or 1.0
    memory_stems = {m.id: frozenset(textutil.terms(_memory_text(m))) for m in context.memories}
    memory_words = {m.id: frozenset(_plain_words(_memory_text(m))) for m in context.memories}
    named = _names_asked(question)
    if q_terms:
        # Meaning reads what is asked, not who about: the names are the words' to check
        # (below). Embedded, "Caroline" pulls the question towards every line that says
        # her name, and "What did Helen recommend?" towards Helen's unrelated note.
        close = similarity.question_closeness(_without(question, named), [s.text for s in sentences])
    else:
        close = similarity.Closeness(np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32))
    margin = close.margin
    few = n < FEW_SENTENCES
    if margin is not None and few:
        # Too few sentences for a typical one (with one, it is the sentence itself): how
        # much closer each is to this question than to an empty one says it alone.
        closeness = np.clip((margin - MARGIN_MIN) / MARGIN_SPAN, 0.0, 1.0)
    else:
        # Sentence vectors put everything at some distance: what counts is standing out from
        # the typical sentence of this context (0 at the median, 1 for the closest).
        distinct = close.distinct
        middle, top = float(np.median(distinct)), float(distinct.max()) if n else 0.0
        closeness = np.clip((distinct - middle) / (top - middle), 0.0, 1.0) if top > middle else np.zeros(n, dtype=np.float32)

    wants = _wants(question)
    asked = set(q_terms)
    named_stems = {textutil.stem(n) for n in named}
    content_terms = [t for t in q_terms if t not in named_stems]
    margins = margin if margin is not None else np.full(n, -1.0, dtype=np.float32)
    content_total = sum(idf[t] for t in content_terms) or 1.0
    # A question about one of the conversation's speakers is answered by what is theirs:
    # the words it asks about must be theirs in the line (their "I", "my"; the other's
    # "you"; their name), not only said in it ("What did Melanie paint?" is not answered by
    # "Caroline: I painted a sunset", nor by "Melanie: Wow, you painted that?").
    held = _held_by_asked(context, named)
    for s, sim, meant in zip(sentences, closeness, margins, strict=True):
        theirs = held.get(s.memory.id, memory_stems[s.memory.id])
        s.coverage = sum(idf[t] for t in content_terms if t in theirs) / content_total
        others = (
            s.memory.id in held
            and any(t in memory_stems[s.memory.id] for t in content_terms)
            and not any(t in theirs for t in content_terms)
        )
        s.margin = float(meant) if margin is not None else 1.0  # by words: the words decide
        s.by_date = s.memory.id in dated
        covered = sum(idf[t] for t in q_terms if t in s.stems) / total
        around = sum(idf[t] for t in q_terms if t in memory_stems[s.memory.id]) / total
        by_date = s.memory.id in dated
        # A shared name alone is not evidence: "Is Ben a pilot?" is not answered by
        # everything Ben said. What the question asks about must be there, or near in meaning.
        about = any(t in theirs for t in content_terms) if content_terms else covered > 0 or around > 0
        fits = _fits(s.text, wants, question)
        # By meaning alone (no word of what is asked in the memory): near is not enough,
        # e5 puts "my favourite colour" near "my blue car". It must give the kind of thing
        # asked for (a place for "where", a name for "who", a date, a number), or stand out
        # clearly closer to this question than to one asking nothing.
        typed = fits > 0 and bool({"who", "where", "when", "count"} & wants)
        bar = MEANING_TYPED if typed else MEANING_UNTYPED
        s.relevant = about or by_date or (not others and float(meant) >= bar and (few or sim >= 0.5))
        if others:
            s.margin = -1.0  # near in meaning because it says the same of someone else
        if {"decision", "who", "where"} & wants:
            # The question's words find the memory (the meeting, the project); what it asks
            # for (the decisions, a person, a place) picks the sentence to quote.
            s.score = 0.5 * covered + 0.3 * float(sim) + 0.9 * around + (2 * fits if around > 0 else fits)
        else:
            s.score = covered + 0.6 * float(sim) + 0.4 * around + fits
        s.score += 0.3 / (1 + s.rank / 3) + (0.6 if by_date else 0.0)
        if "broad" in wants and s.stems:
            # "What do I know about X": a sentence that only restates X tells little.
            s.score *= 0.6 + 0.4 * len(s.stems - asked) / len(s.stems)
        # A question quoted back is not an answer to it.
        if s.text.rstrip().endswith("?"):
            s.score *= 0.6
    if named:
        named_in_text = {m.id: _named_beyond_address(m.text or m.summary) for m in context.memories}
        # A question about someone (or something named) is not answered by a memory that
        # never names them: "What did Caroline realize after her race?" is not answered by
        # Melanie's race.
        for s in sentences:
            speaker = _SPEAKER.match(s.memory.text or s.memory.summary or "")
            if speaker:
                # A line of a conversation is about its speaker, or about whom it names
                # itself: "Melanie: I ran a charity race" says nothing of Caroline's. The
                # whole line counts, not the one sentence: "Lisbon in May is warm. Visit
                # Sintra" answers a question naming both.
                # A name said to someone ("Congrats Priya!") is not the line being about them.
                spoken_to = {w.lower() for w in addressed(s.memory.text or s.memory.summary)} - named_in_text[s.memory.id]
                own = set(_plain_words(speaker.group(1))) | (memory_words[s.memory.id] - spoken_to)
            else:
                own = memory_words[s.memory.id]
            if s.relevant and not named <= own:
                s.relevant = False
    relevant = [s for s in sentences if s.relevant and _stands(s)]
    if not relevant:
        return NOTHING
    relevant.sort(key=lambda s: -s.score)
    picked: list[_Sentence] = []
    seen: set[str] = set()
    best = relevant[0].score
    wide = bool({"decision", "broad"} & wants) or bool(dated)
    limit = MAX_QUOTES if wide else 2
    keep = 0.5 if wide else KEEP_SHARE
    for s in relevant:
        if len(picked) == limit or s.score < best * keep:
            break
        key = " ".join(s.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        picked.append(s)
    return "From your memories:\n\n" + "\n".join(
        _current_first(picked, context, q_terms, when="when" in wants, past_question=_asks_about_the_past(question, bool(dated)))
    )


def _current_first(
    picked: list[_Sentence], context: AnswerContext, q_terms: list[str], *, when: bool, past_question: bool = False
) -> list[str]:
    """What is true now before what was: a superseded memory's successor (when recall gave
    it) is quoted first, even when it shares no word with the question ("I moved to Berlin"
    for "Where do I live?"), and the old memory is quoted as past ("Past (until 2025-06)")."""
    notes = {m.id: m for m in context.memories}

    def current_of(note: MemoryNote) -> MemoryNote | None:
        seen: set[int] = set()
        while note.outdated_by and note.outdated_by in notes and note.id not in seen:
            seen.add(note.id)
            note = notes[note.outdated_by]
        return None if note.valid_until else note

    def best_sentence(note: MemoryNote) -> str:
        options = textutil.sentences(note.text or note.summary) or [note.summary]
        return max(options, key=lambda text: sum(t in set(textutil.terms(text)) for t in q_terms))

    current, past, brought = [], [], set()  # brought: successors already quoted for an old memory
    quoted = {s.memory.id for s in picked if not s.memory.valid_until}  # current memories quoted as picked
    picked_ids = {s.memory.id for s in picked}
    newer = _newer_by_meaning(context)
    if past_question:
        picked = _held_then_first(picked, context, newer)
    else:
        picked = _newer_first(picked, newer)
    for s in picked:
        note = s.memory
        if note.valid_until:
            successor = current_of(note)
            if successor is not None and successor.id not in brought and successor.id not in quoted:
                brought.add(successor.id)
                sentence = best_sentence(successor)
                current.append(f"- {said_by(successor, sentence)}{quote_text(sentence)} [Memory {successor.id}]")
            past.append(f"- Past ({note.past_marker}): {said_by(note, s.text)}{quote_text(s.text)} [Memory {note.id}]")
        elif note.id not in brought:
            later = None if past_question else newer.get(note.id)
            if later is not None and later.id not in brought and later.id not in quoted:
                # What no update check marked but says the same about one thing, later
                # ("Me mudé a Valencia" after "Vivo en Sevilla"): quoted first.
                brought.add(later.id)
                sentence = best_sentence(later)
                current.append(f"- {said_by(later, sentence)}{quote_text(sentence)} [Memory {later.id}]")
            current.append(_quote(s, when=when))
            if past_question:
                # What held then, though only what replaced it matched the question's words.
                for old in context.memories:
                    if old.outdated_by == note.id and old.valid_until and old.id not in picked_ids:
                        picked_ids.add(old.id)
                        past.append(f"- Past ({old.past_marker}): {quote_text(best_sentence(old))} [Memory {old.id}]")
    # A question about a time gone ("in 2023", "before the move") is answered with the
    # fact that held then; any other with what is true now.
    return past + current if past_question else current + past


def _held_by_asked(context: AnswerContext, named: set[str]) -> dict[int, frozenset[str]]:
    """For a question naming a speaker of the conversation: for each line with a speaker,
    the stems that are that speaker's (whose.py). Empty when the question names none."""
    speakers = {m.id: _speaker_name(m) for m in context.memories}
    people = frozenset(v for v in speakers.values() if v)
    asked = named & people
    if not asked:
        return {}
    out: dict[int, frozenset[str]] = {}
    for m in context.memories:
        speaker = speakers[m.id]
        if not speaker:
            continue
        text = m.text or m.summary or ""
        body = text[_SPEAKER.match(text).end() :]
        vocatives = frozenset(w.lower() for w in addressed(text)) - _named_beyond_address(text)
        theirs: set[str] = set()
        # Only the speakers' names point at someone: "LGBTQ" in "I went to a LGBTQ
        # support group" is named but nobody the words belong to.
        for sentence in textutil.sentences(plain_text(body)):
            for stem, owners in whose.owners(sentence, people=people, vocatives=vocatives).items():
                for owner in owners:
                    if owner == whose.SPEAKER:
                        owner = speaker
                    elif owner == whose.LISTENER:
                        # Two speak: "you" is the other one (whoever is asked about, when
                        # the speaker is not).
                        owner = next(iter(asked)) if speaker not in asked else ""
                    if owner in asked:
                        theirs.add(stem)
        out[m.id] = frozenset(theirs)
    return out


def _speaker_name(m: MemoryNote) -> str:
    """The first name a conversation's line opens with ("Caroline: ..."), lower case, or ""."""
    match = _SPEAKER.match(m.text or m.summary or "")
    if not match:
        return ""
    first = match.group(1).split()[0]
    # Labels ("Note: ...", "Summary: ...") are not people.
    return "" if first in textutil.NOT_ENTITIES or first.lower() in textutil.STOPWORDS else first.lower()


def _stands(s: _Sentence) -> bool:
    """Evidence enough to answer: a line holding most of what is asked (names aside), or
    one close to the question in meaning, or one of the period it names. "What did Caroline
    realize after her charity race?" is not answered by a line of Caroline's that says
    "race" and nothing of the rest."""
    return s.by_date or s.coverage >= COVERAGE_MIN or s.margin >= MARGIN_MIN_ANSWER


def _held_then_first(picked: list[_Sentence], context: AnswerContext, newer: dict[int, MemoryNote]) -> list[_Sentence]:
    """For a question about a period gone: of two current memories that say nearly the
    same about one thing (a change no update check marked), the older one recall found in
    that period is quoted before the newer one, brought in when only the newer one shared
    the question's words ("Who was my GP in 2023?")."""
    in_period = set(context.date_matches)
    if not in_period:
        return picked
    order = list(picked)
    by_id = {m.id: m for m in context.memories}
    for old_id, later in newer.items():
        old = by_id.get(old_id)
        if old is None or old_id not in in_period or later.id in in_period or old.valid_until:
            continue
        ib = next((i for i, s in enumerate(order) if s.memory.id == later.id), None)
        if ib is None:
            continue
        ia = next((i for i, s in enumerate(order) if s.memory.id == old_id), None)
        if ia is None:
            sentences = textutil.sentences(old.text or old.summary) or [old.summary]
            order.insert(ib, _Sentence(memory=old, rank=order[ib].rank, text=sentences[0], stems=frozenset()))
        elif ia > ib:
            order.insert(ib, order.pop(ia))
    return order


def _newer_first(picked: list[_Sentence], newer: dict[int, MemoryNote]) -> list[_Sentence]:
    """Two current memories saying nearly the same about one thing (a change no update
    check caught): the newer is quoted first."""
    order = list(picked)
    for a in list(order):
        later = newer.get(a.memory.id)
        ib = next((i for i, s in enumerate(order) if later is not None and s.memory.id == later.id), None)
        ia = order.index(a)
        if ib is not None and ib > ia:
            order.insert(ia, order.pop(ib))
    return order


def _newer_by_meaning(context: AnswerContext) -> dict[int, MemoryNote]:
    """For each current memory of the context, a newer current one that says nearly the
    same about one thing (closer than SAME_FACT, or than NEAR_FACT when each is the
    other's nearest in the context: recall/newer.py reads the stored vectors the same way).
    A newer one that was itself superseded stands for its successor (the chain A, B -> C
    whose link A -> B no check marked: C is quoted before A)."""
    notes = [m for m in context.memories if m.occurred_at]
    by_id = {m.id: m for m in context.memories}

    def current(note: MemoryNote) -> MemoryNote | None:
        seen: set[int] = set()
        while note.valid_until and note.outdated_by in by_id and note.id not in seen:
            seen.add(note.id)
            note = by_id[note.outdated_by]
        return None if note.valid_until else note

    if len(notes) < 2:
        return {}
    texts = [(m.text or m.summary)[:1000] for m in notes]
    close = np.array(similarity.similarity_matrix(texts, texts, queries_are_questions=False), dtype=np.float32)
    if not similarity.by_meaning():
        return {}
    np.fill_diagonal(close, -1.0)
    nearest = close.argmax(axis=1)
    out: dict[int, MemoryNote] = {}
    for i, a in enumerate(notes):
        if a.valid_until:
            continue
        later = [
            j
            for j, b in enumerate(notes)
            if b.occurred_at > a.occurred_at
            and b.id != a.id
            and (
                close[i, j] >= SAME_FACT
                or (close[i, j] >= NEAR_FACT and nearest[i] == j and (nearest[j] == i or b.valid_until is not None))
            )
        ]
        found = [c for c in (current(notes[j]) for j in later) if c is not None and c.id != a.id]
        if found:
            out[a.id] = max(found, key=lambda n: n.occurred_at)
    return out


def _asks_about_the_past(question: str, dated: bool) -> bool:
    return bool(_PAST_Q.search(question)) or (dated and bool(_PAST_TENSE_Q.search(question)))


# Grammar of a question about a time gone: a past period with a past verb, or "before".
_PAST_TENSE_Q = re.compile(r"\b(?:did|was|were|had|used to)\b", re.I)
_PAST_Q = re.compile(
    r"\b(?:before|previously|formerly|used to|back then|at the time|back in)\b"
    r"|\b(?:did|was|were|had)\b.{0,60}\b(?:in|during)\s+(?:(?:early|late|mid)[\s-])?(?:19|20)\d\d\b"
    r"|\b(?:did|was|were|had)\b.{0,60}\blast\s+(?:year|month|summer|winter|spring|autumn|fall)\b",
    re.I,
)
# Closeness (by meaning) of two memories' texts from which they say the same about one
# thing, and the lower one for two that are each other's nearest (recall/newer.py's bounds).
SAME_FACT = 0.90
NEAR_FACT = 0.845


def overview(context: AnswerContext) -> str:
    """For questions about the memories as a whole: the insights first, then the memories
    that matter most."""
    insights = [f"- Insight: {quote_text(c.insight)}" for c in context.consolidations[:2]]
    top = sorted(context.memories, key=lambda m: -m.importance)[: 5 - len(insights)]
    lines = [f"- {said_by(m, m.summary)}{quote_text(m.summary)} [Memory {m.id}]" for m in top]
    return "Here is what stands out in your memories:\n\n" + "\n".join(insights + lines)


_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\w-]*")


_SPEAKER = re.compile(r"\s*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2})\s*:\s")


def _plain_words(text: str) -> list[str]:
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]


def _names_asked(question: str) -> set[str]:
    """The names a question holds: its capitalised words past the first, not "I"."""
    words = _WORD.findall(question)
    return {
        w.lower().removesuffix("'s").removesuffix("’s")
        for w in words[1:]
        if w[:1].isupper() and w.lower() not in textutil.STOPWORDS and w.lower() not in META_TERMS
    }


def _without(question: str, names: set[str]) -> str:
    """The question without the names it holds, or whole when nothing else would be left."""
    if not names:
        return question
    rest = " ".join(w for w in question.split() if not set(_plain_words(w)) & names)
    asks = [t for t in textutil.terms(rest) if t not in QUESTION_WORDS and t not in META_TERMS]
    return rest if asks else question


def _named_beyond_address(text: str) -> set[str]:
    """Names a text says outside an address: "Thanks Sam! Sam's cake was great" is about Sam."""
    words = _plain_words(text)
    spoken_to = {w.lower() for w in addressed(text)}
    return {w for w in spoken_to if words.count(w) > 1}


def _memory_text(m: MemoryNote) -> str:
    return f"{m.text or m.summary} {' '.join(m.entities)}"


def _sentences(context: AnswerContext) -> list[_Sentence]:
    out = []
    for rank, m in enumerate(context.memories):
        parts = [p.strip() for p in textutil.sentences(plain_text(m.text or m.summary)) or [m.summary]]
        parts = [p for p in parts if len(p) >= 3]
        for index, part in enumerate(parts):
            following = parts[index + 1][:1000] if index + 1 < len(parts) else ""
            out.append(_Sentence(m, rank, part[:1000], frozenset(textutil.terms(part)), following=following))
            if len(out) >= MAX_SENTENCES:
                return out
    return out


def _wants(question: str) -> set[str]:
    wants = set()
    if _DECISION_Q.search(question):
        wants.add("decision")
    if _WHO_Q.search(question):
        wants.add("who")
    if _WHEN_Q.search(question):
        wants.add("when")
    if _WHERE_Q.search(question):
        wants.add("where")
    if _COUNT_Q.search(question):
        wants.add("count")
    if _BROAD_Q.search(question):
        wants.add("broad")
    return wants


def _fits(sentence: str, wants: set[str], question: str = "") -> float:
    bonus = 0.0
    asked = question.lower()
    if "decision" in wants and _DECISION_S.search(sentence):
        bonus += 0.35
    if "when" in wants and (
        DATE_RE.search(sentence) or RELATIVE_RE.search(sentence) or re.search(r"\b(?:19|20)\d\d\b", sentence)
    ):
        bonus += 0.3
    if "count" in wants and (_NUMBER.search(sentence) or AMOUNT_RE.search(sentence)):
        bonus += 0.3
    # The answer to "who" or "where" is a name the question does not already hold.
    new_names = [e for e in extract_entities(sentence) if e[:1].isupper() and not DATE_RE.fullmatch(e) and e.lower() not in asked]
    if "who" in wants and new_names:
        bonus += 0.3
    if "where" in wants and new_names and _PLACE_S.search(sentence):
        bonus += 0.3
    return bonus


# A citation written inside a memory's own text must not read as the engine's citation.
_CITATION_IN_QUOTE = re.compile(r"\[(Memory\s+\d+)\]", re.I)


def quote_text(text: str) -> str:
    """A memory's words as they are, on one line: the answer is plain text (the pages show
    it escaped, a note holding "<b>" shows "<b>", as on its card), and a "[Memory N]" the
    memory itself holds becomes "(Memory N)" so a quote can never cite."""
    return _CITATION_IN_QUOTE.sub(r"(\1)", " ".join(text.split()))


def _quote(s: _Sentence, *, when: bool) -> str:
    prefix = ""
    # Only a question that asks when gets a date first, and not when the sentence gives its
    # own ("The launch is on March 3"): the day a note was stored reads as the answer.
    if when and s.memory.occurred_at and (RELATIVE_RE.search(s.text) or not _OWN_DATE.search(s.text)):
        prefix = f"{when_said(s.text, s.memory.occurred_at)}: "
    text = s.text
    if s.following and len(text.split()) < SHORT_SENTENCE_WORDS:
        # "That race sounds great, Mel!" says little; what follows it says what it was about.
        text = f"{text} {s.following}"
    return f"- {prefix}{said_by(s.memory, text)}{quote_text(text)} [Memory {s.memory.id}]"


def said_by(note: MemoryNote, text: str) -> str:
    """ "ChatGPT said: " before a quote of an assistant's reply, so it never reads as the
    person's own fact (its text opens with the name, which then is not said twice)."""
    if not note.said_by:
        return ""
    if text.startswith(f"{note.said_by}:"):
        return ""
    return f"{note.said_by} said: "


_OWN_DATE = re.compile(rf"{DATE_RE.pattern}|\b(?:19|20)\d\d\b", DATE_RE.flags)


def _day(d: date) -> str:
    return f"{d.day} {d.strftime('%B')} {d.year}"


def when_said(sentence: str, said_at: datetime) -> str:
    """When the sentence says it happened, as a date, counted from when it was said
    ("yesterday", said on 8 May 2023 -> "7 May 2023"); the day it was said otherwise."""
    day = said_at.date()
    m = RELATIVE_RE.search(sentence)
    if not m:
        return _day(day)
    single, which, unit, count, count_unit = m.groups()
    if single:
        single = " ".join(single.lower().split())
        return _day(day - timedelta(days=1)) if single in ("yesterday", "last night") else _day(day)
    if which:
        which, unit = which.lower(), unit.lower()
        step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
        if unit == "year":
            return str(day.year + step)
        if unit == "month":
            month_index = day.year * 12 + day.month - 1 + step
            return f"{date(month_index // 12, month_index % 12 + 1, 1).strftime('%B')} {month_index // 12}"
        if unit in ("week", "weekend"):
            return {-1: f"the {unit} before {_day(day)}", 0: f"the {unit} of {_day(day)}", 1: f"the {unit} after {_day(day)}"}[
                step
            ]
        if unit in WEEKDAY_NAMES:
            return {
                -1: f"the {unit.capitalize()} before {_day(day)}",
                0: f"{unit.capitalize()}, the week of {_day(day)}",
                1: f"the {unit.capitalize()} after {_day(day)}",
            }[step]
        return f"{unit} {day.year + step}"  # a season
    amount = _NUM_WORDS.get(" ".join(count.lower().split()), None) if not count.isdigit() else int(count)
    amount = amount or 1
    unit = count_unit.lower()
    if unit == "day":
        return _day(day - timedelta(days=amount))
    if unit == "week":
        return f"{amount} week{'s' if amount != 1 else ''} before {_day(day)}"
    if unit == "month":
        month_index = day.year * 12 + day.month - 1 - amount
        return f"{date(month_index // 12, month_index % 12 + 1, 1).strftime('%B')} {month_index // 12}"
    return str(day.year - amount)
