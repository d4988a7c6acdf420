"""In which order the picked quotes go: what is true now before what was (a superseded
memory's successor first, the old one marked past), the newer of two current memories
that say nearly the same first, and for a question about a time gone, what held then first."""

from __future__ import annotations

import re

import numpy as np
from django.utils import timezone

from ... import textutil
from ..base import AnswerContext, MemoryNote
from . import similarity
from .asked_about import speaker_name
from .changes import cues
from .changes.kept_apart import not_a_change
from .quoting import SHORT_SENTENCE_WORDS, quote, quote_text, said_by
from .sentences import Sentence


def current_first(
    picked: list[Sentence],
    context: AnswerContext,
    q_terms: list[str],
    *,
    when: bool,
    past_question: bool = False,
    dated_after: frozenset[int] = frozenset(),
    best_said: dict[int, str] | None = None,
) -> list[str]:
    """What is true now before what was: a superseded memory's successor (when recall gave
    it) is quoted first, even when it shares no word with the question ("I moved to Berlin"
    for "Where do I live?"), and the old memory is quoted as past ("Past (until 2025-06)").
    A question about a time gone is answered in recall's order, the memories of the time
    after what it is dated by (`dated_after`: "before Dunmore Bank") last."""
    notes = {m.id: m for m in context.memories}

    def current_of(note: MemoryNote) -> MemoryNote | None:
        seen: set[int] = set()
        while note.outdated_by and note.outdated_by in notes and note.id not in seen:
            seen.add(note.id)
            note = notes[note.outdated_by]
        return None if note.valid_until else note

    current, past, brought = [], [], set()  # brought: successors already quoted for an old memory
    quoted = {s.memory.id for s in picked if not s.memory.valid_until}  # current memories quoted as picked
    picked_ids = {s.memory.id for s in picked}
    newer = _newer_by_meaning(context)
    if past_question:
        picked = _held_then_first(picked, context, newer)
    else:
        # Between two quotes both picked, each other's nearest is evidence enough
        # (recall/newer.py's bound); bringing in one not picked takes the stricter one.
        # What recall read as one fact said again later counts between two picked quotes,
        # never to bring one in (its bound is the looser one).
        close = _with_restated(_newer_by_meaning(context, EACH_OTHERS_NEAREST), context)
        for s in picked:
            # A quote superseded by a fact said again later (A -> B marked, C restating B,
            # C picked): C goes above A's quote too, so it comes before B, brought for A.
            successor = current_of(s.memory) if s.memory.valid_until else None
            if successor is not None and successor.id in close and s.memory.id not in close:
                close[s.memory.id] = close[successor.id]
        picked = _newer_first(picked, close)
    for s in picked:
        note = s.memory
        if note.valid_until:
            successor = current_of(note)
            if successor is not None and successor.id not in brought and successor.id not in quoted:
                brought.add(successor.id)
                later = None if past_question else newer.get(successor.id)
                if later is not None and later.id not in brought and later.id not in quoted:
                    # The successor's own successor no check marked (A -> B marked, B -> C missed).
                    brought.add(later.id)
                    sentence = brought_text(later, q_terms, best_said)
                    current.append((later.id, f"- {said_by(later, sentence)}{quote_text(sentence)} [Memory {later.id}]"))
                sentence = brought_text(successor, q_terms, best_said)
                current.append((successor.id, f"- {said_by(successor, sentence)}{quote_text(sentence)} [Memory {successor.id}]"))
            past.append((note.id, f"- Past ({note.past_marker}): {said_by(note, s.text)}{quote_text(s.text)} [Memory {note.id}]"))
        elif note.id not in brought:
            later = None if past_question else newer.get(note.id)
            if later is not None and later.id not in brought and later.id not in quoted:
                # What no update check marked but says the same about one thing, later
                # ("Me mudé a Valencia" after "Vivo en Sevilla"): quoted first.
                brought.add(later.id)
                sentence = brought_text(later, q_terms, best_said)
                current.append((later.id, f"- {said_by(later, sentence)}{quote_text(sentence)} [Memory {later.id}]"))
            current.append((note.id, quote(s, when=when)))
            if past_question:
                # What held then, though only what replaced it matched the question's words.
                for old in context.memories:
                    if old.outdated_by == note.id and old.valid_until and old.id not in picked_ids:
                        picked_ids.add(old.id)
                        past.append(
                            (
                                old.id,
                                f"- Past ({old.past_marker}): {quote_text(brought_text(old, q_terms, best_said))} [Memory {old.id}]",
                            )
                        )
    if not past_question:
        return [line for _, line in current + past]
    # A question about a time gone ("in 2023", "before the move") is answered with what
    # held then: recall has put it first (recall/newer.py reads the period, the chain of
    # versions, "before" and "first"), so the quotes go in recall's order.
    rank = {m.id: i for i, m in enumerate(context.memories)}
    return [line for _, line in sorted(past + current, key=lambda item: (item[0] in dated_after, rank.get(item[0], len(rank))))]


# A memory brought in for what it replaced (or replaced by) is quoted whole up to this
# many words: it was not picked for a sentence of its own, and a note of a change often
# says first what ended ("Helga retired.", "The Samsung finally died!") and then what
# holds now ("The new head of department is Marco Bianchi"), without the question's words.
WHOLE_NOTE_WORDS = 40


def brought_text(note: MemoryNote, q_terms: list[str], best_said: dict[int, str] | None = None) -> str:
    """What is quoted of a memory brought in rather than picked by its sentences: the whole
    note when short, else the sentence the answerer found best for the question
    (`best_said`, by words and meaning: a newer note often says its value without the
    question's words), else the one with most of the question's words, with the next one
    when it is short (as a picked sentence is quoted: quoting.quote)."""
    text = note.text or note.summary
    options = textutil.sentences(text) or [note.summary]
    if len(text.split()) <= WHOLE_NOTE_WORDS:
        return " ".join(options)
    said = (best_said or {}).get(note.id)
    if said in options:
        best = options.index(said)
    else:
        best = max(range(len(options)), key=lambda i: sum(t in set(textutil.terms(options[i])) for t in q_terms))
    chosen = options[best]
    if best + 1 < len(options) and len(chosen.split()) < SHORT_SENTENCE_WORDS:
        chosen = f"{chosen} {options[best + 1]}"
    return chosen


def _held_then_first(picked: list[Sentence], context: AnswerContext, newer: dict[int, MemoryNote]) -> list[Sentence]:
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
            order.insert(ib, Sentence(memory=old, rank=order[ib].rank, text=sentences[0], stems=frozenset()))
        elif ia > ib:
            order.insert(ib, order.pop(ia))
    return order


def _newer_first(picked: list[Sentence], newer: dict[int, MemoryNote]) -> list[Sentence]:
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


def _with_restated(found: dict[int, MemoryNote], context: AnswerContext) -> dict[int, MemoryNote]:
    """`found` with the pairs recall read as one fact said again later (its stored vectors,
    the update check's grammar: recall/newer.py), the newest current one kept for each."""
    by_id = {m.id: m for m in context.memories}
    out = dict(found)
    for old_id, new_id in context.restated:
        note = by_id.get(new_id)
        if note is None or note.valid_until or old_id not in by_id:
            continue
        kept = out.get(old_id)
        if kept is None or (note.occurred_at and kept.occurred_at and note.occurred_at > kept.occurred_at):
            out[old_id] = note
    return out


def _newer_by_meaning(context: AnswerContext, bound: float | None = None) -> dict[int, MemoryNote]:
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
                or (bound is not None and close[i, j] >= bound and nearest[i] == j and nearest[j] == i)
            )
        ]
        # The chain A -> B marked, B -> C missed: C says nearly what A said, so it continues B
        # (by the tighter reading, as recall/newer.py: a note nearest to A alone, a little
        # like it, is no continuation of a chain the update check has read).
        before = [j for j, p in enumerate(notes) if p.outdated_by == a.id and p.valid_until]
        later += [
            j
            for j, b in enumerate(notes)
            if b.occurred_at > a.occurred_at
            and not b.valid_until
            and j not in later
            and any(
                close[p, j] >= SAME_FACT or (close[p, j] >= EACH_OTHERS_NEAREST and nearest[j] == p and nearest[p] == j)
                for p in before
            )
        ]
        # A -> C marked, B (this one) missed between: B says nearly what A said, C replaced A.
        later += [
            j
            for j, b in enumerate(notes)
            if b.occurred_at > a.occurred_at
            and not b.valid_until
            and j not in later
            and any(
                p.outdated_by == b.id and (close[k, i] >= SAME_FACT or (close[k, i] >= NEAR_FACT and nearest[i] == k))
                for k, p in enumerate(notes)
            )
        ]
        # Only thought of ("might take on the under-14s"), or beside the older fact rather
        # than changing it ("they also sell ...", "my brother got a job at ..."): not first.
        later = [
            j
            for j in later
            if not only_thought_of(notes[j].text or notes[j].summary)
            and not not_a_change(texts[i], notes[j].text or notes[j].summary)
        ]
        if OWN_SPEAKER_ONLY and _in_conversation(a):
            # In a conversation a fact is said again by the one whose it is: another
            # speaker's later line near it in meaning is a reply, not its newer value.
            later = [j for j in later if not _in_conversation(notes[j]) or speaker_name(notes[j]) == speaker_name(a)]
        found = [c for c in (current(notes[j]) for j in later) if c is not None and c.id != a.id]
        if found:
            out[a.id] = max(found, key=lambda n: n.occurred_at)
    return out


def _in_conversation(note: MemoryNote) -> bool:
    """A line said by someone at a position of a conversation ("chat:D3:14"), not a note
    opening with a label ("Vet: Dr Reyes ...")."""
    return bool(speaker_name(note)) and textutil.source_group(note.source)[1]


def only_thought_of(text: str) -> bool:
    """A note that only thinks of a value ("Lena might take on the under-14s", "vielleicht
    ziehen wir nach Bonn"): the hedges of changes/cues.py, less the noun "plan" ("raised the
    family plan to 19.99" holds a value)."""
    return any(not m.group(0).lower().startswith("plan ") for m in cues.HEDGED.finditer(text[:500]))


def asks_about_the_past(question: str, dated: bool) -> bool:
    """A question about a time gone: by English grammar, by the words of earlier time of
    several languages (textutil.asks_what_was_before), or, in any language, by a year it
    names that has ended ("¿Qué coche tenía en 2024?", "Wo habe ich im Jahr 2024 gewohnt?")."""
    return (
        bool(_PAST_Q.search(question))
        or textutil.asks_what_was_before(question)
        or (dated and bool(_PAST_TENSE_Q.search(question)))
        or any(int(y) < timezone.localdate().year for y in _YEAR.findall(question))
    )


# A year as a question names it: digits are the same in every language the notes are in.
_YEAR = re.compile(r"(?<![\d.,/:-])((?:19|20)\d\d)(?![\d.,/:-]?\d)")
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
EACH_OTHERS_NEAREST = 0.83
# Whether a conversation's line is continued only by a later line of its own speaker.
OWN_SPEAKER_ONLY = True
