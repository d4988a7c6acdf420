"""A line of a conversation read with the turns it answers.

In a chat the answer is often a reply that repeats nothing of what it answers:
"who's your new manager" / "a woman called Siobhan". Read alone, the reply holds no word
of "Who is Marco's new manager?" and the answer says "not found". So each line of a
conversation (a source ending in a position, textutil.source_group) is read together
with the turns just before it that recall also brought, each turn's words still
belonging to whom they belonged in that turn (whose.py: the "your" of the question is
the replier's).
"""

from __future__ import annotations

from collections import defaultdict

from ... import textutil
from ..base import AnswerContext
from .asked_about import SPEAKER

# The turns before a line that it may be answering: the question, and the line that
# question was about ("we adopted a dog" / "what kind" / "greyhound").
TURNS_BEFORE = 2


def turns_before(context: AnswerContext) -> dict[int, tuple[int, ...]]:
    """For each line of a conversation, the ids of the turns just before it in the same
    sequence that the context holds. Turns ingested together have consecutive ids (as
    recall's neighbours read them). Only turns said by someone ("Dana: ..."): notes kept in
    a sequence with no speaker are separate notes, none the reply to another ("Blood test
    on Tuesday" lent "blood test" to the note after it, "Meine Steuerberaterin heißt ...",
    which then answered "Where is the blood test?")."""
    groups: dict[str, set[int]] = defaultdict(set)
    for m in context.memories:
        group, positioned = textutil.source_group(m.source)
        if positioned and SPEAKER.match(m.text or m.summary or ""):
            groups[group].add(m.id)
    out: dict[int, tuple[int, ...]] = {}
    for ids in groups.values():
        for i in ids:
            prior = tuple(j for j in range(i - TURNS_BEFORE, i) if j in ids)
            if prior:
                out[i] = prior
    return out


def asked_by(context: AnswerContext) -> dict[int, int]:
    """For each line that replies to a question, the id of that question: the turn just
    before it in the same sequence, said by someone else and ending in a question mark
    ("Jonas: what did you end up naming the puppy?" / "Maya: we went with Biscuit"). The
    reply answers in its own words, none of the question's."""
    by_id = {m.id: m for m in context.memories}
    out: dict[int, int] = {}
    for i, prior in turns_before(context).items():
        j = i - 1
        if j not in prior:
            continue
        line, asking = (SPEAKER.match(by_id[k].text or by_id[k].summary or "") for k in (i, j))
        said = (by_id[j].text or by_id[j].summary or "").rstrip()
        if line and asking and line.group(1) != asking.group(1) and said.endswith("?"):
            out[i] = j
    return out
