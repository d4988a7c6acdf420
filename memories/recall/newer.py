"""What is true now, when no update was marked: among the first memories recall ranks, two
that say nearly the same about one thing (a change whose update check missed it, the
middle link of a chain) are put newer first, for a question that asks about now. A
question about a time ("in 2023", "before", "did I ...") keeps its order. Only places
within the first few change: which memories are recalled does not.

"Nearly the same" is read from the stored vectors in two ways: closer than SAME_FACT, or
closer than NEAR_FACT when the two are each other's nearest among the first few (a
statistic of this question's memories, not a fixed bound alone: e5 puts every pair of
notes somewhere above 0.75). The older one goes just below the newer one; a newer one
that was itself superseded takes the older below its successor too (A, B -> C with A -> B
missed: C, B, A)."""

from __future__ import annotations

import re

import numpy as np

from .. import textutil
from ..models import Memory, MemoryVector
from . import dates
from .result import restated_reason

# Cosine of two memories' vectors from which they say nearly the same about one thing
# (the offline update check's same-slot bound, llm/extractive/changes/anchors.py), and the lower
# bound for two that are each other's nearest. Measured on multilingual-e5-small over
# tests/data/updates_dev.json, updates_heldout.json and updates.json: pairs of one fact
# (an update) 0.81-0.96, median 0.885; a scenario's note and the nearest unrelated
# background note 0.76-0.86.
SAME_FACT = 0.90
NEAR_FACT = 0.845
# Two of the first memories that are each other's nearest, for a question about now: a
# looser bound (only places within the head change, never which memories are recalled).
# On tests/data/updates_timeq_dev.json pairs of one fact each other's nearest went down to
# 0.836 ("My favourite tea is Earl Grey" / "These days I prefer sencha").
EACH_OTHERS_NEAREST = 0.83
# How many of the first memories these orderings read, whatever k is asked, so the first
# five of a recall are the first five of a longer one (an answer recalls 50 by default).
# Before round 19 it was min(k, 10): an answer's first five were reordered over ten, and
# LoCoMo dev's R@5 read that way was 69.5%, against 74.3% over five (R@10-50 the same).
HEAD = 5
# What held through a period asked about (said before it, replaced after it) gets the
# date credit of a note said in it (dates.W_DATE). False: it is only placed above its
# own later versions.
HELD_THROUGH_CREDIT = True


def _never_kept_apart(older_text: str, newer_text: str) -> bool:
    return False


# Whether a newer note's grammar keeps it beside an older fact (llm/extractive/changes/
# kept_apart.py). Handed in by apps.py: recall may not import the offline engine.
not_a_change = _never_kept_apart


def use_kept_apart(check) -> None:
    global not_a_change
    not_a_change = check


# How much of a memory's text the grammar check reads (its opening says what it is).
TEXT_CHARS = 1000
# What was before, with no date to read it by ("before", "previously", "originally", in
# several languages): textutil.asks_what_was_before. And any word of the past: a question
# in it keeps its order.
_ABOUT_THE_PAST = re.compile(r"\b(?:did|was|were|had|used to|before|previously|formerly|back then|at the time)\b", re.I)


def newer_first(ranked: list, *, owner, question: str, dated: bool) -> list:
    if not dated and textutil.asks_what_was_before(question) and len(ranked) >= 2:
        return _older_first(ranked, owner=owner, earliest=textutil.asks_for_the_earliest(question))
    if dated or _ABOUT_THE_PAST.search(question or "") or textutil.asks_what_was_before(question) or len(ranked) < 2:
        return ranked
    head = list(ranked[:HEAD])
    facts = _SameFacts.read(owner, head)
    if facts is None:
        return ranked
    when = {c.id: c.occurred_at for c in head}
    # Each current memory, oldest first, goes just below the last newer memory that says
    # the same: one pass, so no pair is moved twice.
    by_id = {c.id: c for c in head}
    for a in sorted((pk for pk in facts.ids if pk not in facts.superseded), key=lambda pk: when[pk]):
        order = [c.id for c in head]
        later = [
            pk
            for pk in order
            if pk in facts.index and when[pk] > when[a] and facts.continues(a, pk) and not facts.kept_apart(a, pk)
        ]
        if not later:
            continue
        # Said of the newest, wherever it ranks: the answer quotes it first
        # (AnswerContext.restated), and the person asking sees why.
        by_id[max(later, key=lambda pk: when[pk])].reasons.append(restated_reason(a))
        below = [pk for pk in later if order.index(pk) > order.index(a)]
        if below:
            moved = head.pop(order.index(a))
            head.insert([c.id for c in head].index(below[-1]) + 1, moved)
    # What was moved down leaves the fact it replaced (marked) above it: that one goes back
    # just below its successor (A -> B marked, B moved below C: C, B, A; not A, C, B).
    for pk, nxt in facts.successor.items():
        order = [c.id for c in head]
        if pk in order and nxt in order and order.index(pk) < order.index(nxt):
            moved = head.pop(order.index(pk))
            head.insert([c.id for c in head].index(nxt) + 1, moved)
    return head + list(ranked[len(head) :])


def _older_first(ranked: list, *, owner, earliest: bool = False) -> list:
    """For a question about what was before, with no date ("Who was my manager before the
    reorg?"): of the memories that say nearly the same about one thing as the first of
    them recall ranks, the one just before it goes above it, once (a chain Madrid ->
    Valencia -> Seville asked "before I moved to Seville" gives Valencia, not Madrid); for
    a question about the first ("What editor did I use first?", "originally"), the
    earliest of its chain."""
    head = list(ranked[:HEAD])
    facts = _SameFacts.read(owner, head)
    if facts is None:
        return ranked
    when = {c.id: c.occurred_at for c in head}
    order = [c.id for c in head]
    for b in order:
        if b not in facts.index:
            continue
        older = [pk for pk in order[order.index(b) + 1 :] if pk in facts.index and when[pk] < when[b] and facts.continues(pk, b)]
        if not older:
            continue
        # Just before it: the one marked as replaced by it, else the best ranked older one
        # (the latest said is as often a note that only reads close).
        marked = [pk for pk in older if facts.successor.get(pk) == b]
        chosen = marked[0] if marked else older[0]
        if earliest:
            # Back along the chain: what an older version continues, or was replaced by
            # (marked), is older still (Sublime -> VS Code -> Zed: "first" is Sublime).
            chain = {b, *older}
            grew = True
            while grew:
                more = {
                    pk
                    for pk in order
                    if pk in facts.index
                    and pk not in chain
                    and when[pk] < when[b]
                    and any(facts.continues(pk, g) or facts.successor.get(pk) == g for g in chain)
                }
                chain |= more
                grew = bool(more)
            chosen = min(chain - {b}, key=lambda pk: when[pk])
        if order.index(chosen) < order.index(b):
            break
        moved = head.pop(order.index(chosen))
        head.insert(order.index(b), moved)
        break  # the question is about one thing: the first that has an older version
    return head + list(ranked[len(head) :])


def held_then_first(ranked: list, *, owner, spans) -> list:
    """For a question about a period gone ("Who was my GP in 2023?"), the mirror of
    newer_first: of two memories that say nearly the same about one thing, one said after
    the period ended cannot be what held then, so the one said by its end goes above it
    (a change no update check marked; a marked one prefer_current already places); of two
    said by its end, the later. What is read as having held through the period gets the
    period's date credit, as a note said in it would: it goes above notes that only happen
    to be dated then."""
    ends = [s.end for s in spans if getattr(s, "end", None) is not None]
    if not ends or len(ranked) < 2:
        return ranked
    until = max(ends)
    head = list(ranked[:HEAD])
    facts = _SameFacts.read(owner, head)
    if facts is None:
        return ranked
    day = {c.id: c.occurred_at.date() for c in head}
    held_through: list = []

    def lift(moved) -> None:
        # Said before the period and not yet replaced in it: what held then, though its own
        # date is outside the period (the answer reads this as dated evidence).
        if not moved.date_reason:
            moved.date_reason = f"held through {_label(spans)}"
            held_through.append(moved)

    for b in [c.id for c in head]:
        if b not in facts.index or day[b] <= until:
            continue
        order = [c.id for c in head]
        held = [pk for pk in order[order.index(b) + 1 :] if pk in facts.index and day[pk] <= until and facts.continues(pk, b)]
        if held:
            moved = head.pop(order.index(held[0]))
            head.insert(order.index(b), moved)
            lift(moved)
    # Of two that say nearly the same about one thing, both said by the period's end, the
    # one that held for more of the period goes first: A then B before 2024, "in 2024" asks
    # for B; A in January and B in November, "in 2025" asks for A, which held ten months.
    said_by_end = sorted((pk for pk in (c.id for c in head) if pk in facts.index and day[pk] <= until), key=lambda pk: day[pk])
    held = _days_held(said_by_end, day, facts, spans, until)
    for b in said_by_end:
        order = [c.id for c in head]
        earlier = [
            pk
            for pk in order[: order.index(b)]
            if pk in held and day[pk] < day[b] and _follows(facts, pk, b) and not facts.kept_apart(pk, b) and held[b] >= held[pk]
        ]
        if earlier:
            moved = head.pop(order.index(b))
            head.insert(order.index(earlier[0]), moved)
            lift(moved)
    for a in said_by_end:
        order = [c.id for c in head]
        later = [
            pk
            for pk in order[: order.index(a)]
            if pk in held and day[pk] > day[a] and _follows(facts, a, pk) and held[a] > held[pk]
        ]
        if later:
            moved = head.pop(order.index(a))
            head.insert(order.index(later[0]), moved)
            lift(moved)
    for c in held_through:
        if HELD_THROUGH_CREDIT:
            c.bonus += dates.W_DATE
            at = head.index(c)
            higher = next((i for i, other in enumerate(head[:at]) if other.score < c.score), at)
            head.insert(higher, head.pop(at))
    return head + list(ranked[len(head) :])


def _days_held(ids: list[int], day: dict, facts, spans, until) -> dict[int, int]:
    """How many days of the asked period each fact held: from when it was said (or the
    period's start) to when the next of them that says the same replaced it (or the
    period's end)."""
    starts = [s.start for s in spans if getattr(s, "start", None) is not None]
    since = min(starts) if starts else None
    held = {}
    for pk in ids:
        replaced = min((day[x] for x in ids if day[x] > day[pk] and _follows(facts, pk, x)), default=None)
        ends = min(replaced, until) if replaced is not None else until
        begins = max(day[pk], since) if since is not None else day[pk]
        held[pk] = max(0, (ends - begins).days)
    return held


def _follows(facts, a: int, b: int) -> bool:
    """b replaced a (marked), or says nearly the same about one thing."""
    return facts.successor.get(a) == b or facts.continues(a, b)


def _label(spans) -> str:
    return " and ".join(s.label for s in spans if getattr(s, "label", ""))


class _SameFacts:
    """Which of the first memories say nearly the same about one thing, from their stored
    vectors (SAME_FACT, or NEAR_FACT for each other's nearest)."""

    def __init__(self, ids, matrix, successor):
        self.ids, self.matrix, self.successor = ids, matrix, successor
        self._texts: dict[int, str] | None = None
        self.superseded = set(successor)
        self.index = {pk: i for i, pk in enumerate(ids)}
        self.nearest = {pk: ids[int(np.argmax(matrix[i]))] for i, pk in enumerate(ids)}

    @classmethod
    def read(cls, owner, head) -> _SameFacts | None:
        # By the memories' keys alone, the owner checked on each row: with the owner in the
        # WHERE clause SQLite's planner walked the owner's index, every vector of the owner
        # (120 ms at 100k memories, for ten rows).
        rows = [
            (pk, model, raw)
            for pk, owner_id, model, raw in MemoryVector.objects.filter(memory_id__in=[c.id for c in head]).values_list(
                "memory_id", "owner_id", "model", "vector"
            )
            if owner_id == owner.pk
        ]
        if len({model for _, model, _ in rows}) != 1:
            return None  # no vectors, or of two models that cannot be compared
        vectors = {pk: np.frombuffer(raw, dtype="<f4") for pk, _, raw in rows}
        ids = [c.id for c in head if c.id in vectors]
        if len(ids) < 2:
            return None
        successor = dict(
            Memory.all_objects.filter(owner=owner, pk__in=ids, outdated_by__isnull=False).values_list("pk", "outdated_by_id")
        )
        stacked = np.stack([vectors[pk] for pk in ids])
        matrix = stacked @ stacked.T
        np.fill_diagonal(matrix, -1.0)
        return cls(ids, matrix, successor)

    def continues(self, a: int, b: int) -> bool:
        """b says the same about one thing as a, or as what a itself replaced (the chain
        A -> B marked, B -> C missed: C says nearly what A said, so C continues B too)."""
        if self.same(a, b) or self.same(b, a):
            return True
        # Through what a replaced, only by the tighter reading: a note that reads only a
        # little like the replaced one, nearest to it of a few, is no continuation of a
        # chain the update check has already read ("Dentist check-up booked for 3 June,
        # 4:15pm" near "Opening at 6:30 from next Tuesday", 0.852, after the 7:15 note).
        before = [pk for pk, nxt in self.successor.items() if nxt == a and pk in self.index and pk != b]
        if any(self.same(pk, b, loose=False) or self.same(b, pk, loose=False) for pk in before):
            return True
        # A -> C marked, B missed between: B says nearly what A said, and C replaced A.
        replaced = [pk for pk, nxt in self.successor.items() if nxt == b and pk in self.index and pk != a]
        return any(self.same(pk, a) or self.same(a, pk) for pk in replaced)

    def kept_apart(self, older: int, newer: int) -> bool:
        """The newer note's grammar says it sits beside the older fact rather than changing
        it ("they also sell ...", "my brother got a job at ...", "it'd be $23, not worth
        it"): close in meaning, yet no reason to put it first. The texts are read only
        when a pair is about to be reordered (one query for the few first memories)."""
        texts = self.texts()
        return not_a_change(texts.get(older, ""), texts.get(newer, ""))

    def texts(self) -> dict[int, str]:
        if self._texts is None:
            rows = Memory.all_objects.filter(pk__in=self.ids).values_list("pk", "raw_text", "summary")
            self._texts = {pk: (raw or summary or "")[:TEXT_CHARS] for pk, raw, summary in rows}
        return self._texts

    def share_a_word(self, a: int, b: int) -> bool:
        """The two texts share a content word (its stem): "Sourdough £5.40" / "Sourdough
        loaf: £4.50", not "iced latte sales through the roof" / "Milk drops at 6.15am"."""
        texts = self.texts()
        stems = [set(textutil.terms(texts.get(pk, ""))) for pk in (a, b)]
        return bool(stems[0] & stems[1])

    def same(self, a: int, b: int, *, loose: bool = True) -> bool:
        close = float(self.matrix[self.index[a], self.index[b]])
        # A superseded one's nearest is its successor, not the older note: a's nearest suffices.
        if self.nearest[a] == b and self.nearest[b] == a:
            return close >= EACH_OTHERS_NEAREST
        # The looser reading (a missed middle link of a chain, nearest to a note of it) needs
        # a word in common too: an unrelated note of the period can be nearest by meaning alone.
        return close >= SAME_FACT or (
            loose
            and close >= NEAR_FACT
            and self.nearest[a] == b
            and (b in self.superseded or a in self.superseded)
            and self.share_a_word(a, b)
        )
