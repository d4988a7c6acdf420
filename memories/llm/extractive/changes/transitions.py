"""A change told with no change word: a handover, the writer moving on, a state begun.

"Femi passed on-call to Grace", "Nos mudamos a Valencia", "Sam started at Kingsmead":
each changes a fact though it names no "now" or "instead"; each is taken only with the
evidence that tells it from its look-alike (side by side, a visit, someone else's news).
"""

from __future__ import annotations

import re

from .anchors import BEGINNING_ANCHORS, BEGINNING_MARGIN, MOVED_ON_MARGIN, ONE_OFF_ANCHORS, SAME_SLOT, SAME_SLOT_EVENT, leans
from .cues import past_event
from .statements import tokens_of
from .subjects import first_person
from .values import kinds_of

# Two values side by side in one role ("Aisha and Tomasz presented ..."), not one
# handing the slot to the other ("Femi passed on-call to Grace").
_TOGETHER = r"\s*(?:,|&|\band\b|\bwith\b|\by\b|\bund\b|\bet\b|\be\b)\s*"


def handed_on(
    old_s: str, new_c: str, named_old: list[str], new_values: list[str], closeness: float, names: frozenset[str]
) -> bool:
    """With no change word: the old value, as the clause's subject, hands the slot to a new
    value of its kind, not side by side with it, as close to the old sentence as a
    restatement ("Femi passed on-call to Grace" after "The on-call lead is Femi"). The
    writer's own slot is not handed on by its value ("Acme hired a new CFO" after "I work
    at Acme")."""
    if closeness < SAME_SLOT or kinds_of(named_old) != kinds_of(new_values) or first_person(old_s, names):
        return False
    if (tokens_of(new_c) or [""])[0].lower() not in named_old:
        return False
    low = new_c.lower()
    for old in named_old:
        for new in new_values:
            if re.search(rf"{re.escape(old)}{_TOGETHER}{re.escape(new)}|{re.escape(new)}{_TOGETHER}{re.escape(old)}", low):
                return False
    return True


def writer_moved_on(
    old_s: str, new_s: str, new_values: list[str], closeness: float, names: frozenset[str], lang: str, stops: frozenset[str]
) -> bool:
    """The writer's state, then the writer's change to a new named value, with no word of
    the slot in common ("Vivo en Sevilla" / "Nos mudamos a Valencia"): both first person,
    the older a state, the value a name, and the newer leaning to a change of state, not
    to a visit ("Fuimos a Valencia el fin de semana")."""
    if closeness < SAME_SLOT or past_event(old_s, any_language=True) or kinds_of(new_values) != {"word"}:
        return False
    if not (first_person(old_s, names, lang) and first_person(new_s, names, lang)):
        return False
    return leans(new_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, MOVED_ON_MARGIN, stops, names)


def state_begun(old_s: str, new_s: str, closeness: float, names: frozenset[str], lang: str, stops: frozenset[str]) -> bool:
    """A past event that begins the state the older note states, about the same subject
    ("Sam started at Kingsmead Academy" after "Sam is in year 6 at Oakwood Primary"): the
    older sentence is not an event itself, and the two are closer than two restatements
    of one slot usually are."""
    if closeness < SAME_SLOT_EVENT or past_event(old_s, any_language=True):
        return False
    if not leans(new_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, BEGINNING_MARGIN, stops, names):
        return False  # "Noor visited Westfield Clinic" is not "Noor started at Westfield Clinic"
    first_old, first_new = ((tokens_of(x) or [""])[0] for x in (old_s, new_s))
    if first_old == first_new and first_old[:1].isupper() and first_old.lower() not in stops:
        return True  # the same name opens both: "Sam is ..." / "Sam started ..."
    return first_person(old_s, names, lang) and first_person(new_s, names, lang)
