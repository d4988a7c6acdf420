"""A second path: one value swapped for another of its kind in the slot it filled.

`decision.judge` reads a change through a chain of gates, each built on one shape of
sentence (the same frame, one kind of value, a change word or an event); a change said in
another shape fails one of them ("pay is 41k" / "promotion came through - 47k now", "IT
swapped my Dell for a MacBook Pro", "Jonas left Paper Lanterns to join The Vellums"). This
path asks for less shape and more of what makes any change a change:

- the two notes are close in meaning where the values sit: a statement of the older note
  that holds its value and one of the newer note that holds a new one, their cosine as
  written (masked, e5 puts any two short statements of a value within 0.90 of each other;
  closeness alone does not tell updates from look-alikes, the rest below does);
- the newer note states a value of the kind the older one filled (a name for a name, a
  number for a number; a code that opens with a letter, "HB20", and a name written with a
  capital inside, "iPhone", are names) that the older note does not have;
- the older value is gone from the newer note, or named only as left, ended or changed,
  or as where a move started from ("Maya left The Foxes to join Northbound", "Dumped
  Comcast, got fiber from Ziply"): a value named again and still held ("a rental Corolla
  while the Mazda is in the shop") is no swap;
- the same subject: not someone else's news or someone's someone ("Jake's brother moved
  to Seattle"), not two holders said alike ("Ana works at IBM" / "Ben works at Oracle",
  "My sister Eva lives in Vienna" / "My sister Marta lives in Graz"), not two slots of
  one frame ("my favourite movie" / "my favourite book"), not another thing of the kind
  ("the team meeting" / "the client meeting");
- a state, not a visit, a stay, a plan, an addition, a refusal or a memory of a time gone
  (the closed classes of cues.py and the anchors of anchors.py); an older event ("Bought
  running shoes, Brooks Ghost 15") only when it began a state or shares a slot word;
- two numbers only with a word of change, of one form (an amount, a clock time, a
  weekday, a month) and of one thing.
"""

from __future__ import annotations

import re


from .... import textutil
from .. import language
from .anchors import (
    BEGINNING_ANCHORS,
    MOVED_ON_MARGIN,
    OLD_BEGINNING_MARGIN,
    ONE_OFF_ANCHORS,
    REFUSAL_ANCHORS,
    REFUSAL_MARGIN,
    TAKING_ANCHORS,
    leans,
    says_ended,
)
from .cues import (
    ADDITION,
    BOUNDED,
    CHANGE,
    EFFECTIVE,
    HEDGED,
    PAST_FRAME,
    past_event,
    said_as_past,
)
from .decision import side_by_side, denied, kept
from .plain import value_type
from .renumbered import CALENDAR
from .slots import frame_word_swapped, holds_apart, other_kind, other_thing, shares_slot_word, slot_words_differ, two_holders
from .statements import closest_pair, content_words, mentions, similar_word, tokens_of, units_of, words_of
from .subjects import first_person, other_owner, other_subject, person_noun, possessed_thing, someone_else, values_of_another
from .values import NUMBER_WORDS, kinds_of, names_in, numbers_in_names, parallel_openers, part_of_another_name, values_in

WEEKDAYS = frozenset(w.lower() for w in textutil.WEEKDAYS)

# Words that say the older value is replaced, not joined (a closed class).
INSTEAD = re.compile(
    r"\b(?:instead|no longer|any ?more|not any longer|stattdessen|nicht mehr|en lugar de|en vez de|ya no|au lieu de|plus de|em vez de|já não|invece|non più)\b",
    re.I,
)

# How close, by meaning, the older statement holding the value and the newer one holding
# the new value must be (their cosine as written: masked, any two short statements of a
# value come within 0.90 of each other; "Bought running shoes, X" / "My manager is X").
SWAP_SLOT = 0.855


def swapped(old_text: str, new_text: str, *, threshold: float = SWAP_SLOT):
    """(old values, new values, closeness) when the newer note swaps the older note's value
    for another of its kind, else None."""
    if old_text.rstrip().endswith("?") or " ".join(old_text.split()).lower() == " ".join(new_text.split()).lower():
        return None
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    openers = parallel_openers(old_text, new_text)
    names = names_in(old_text) | names_in(new_text) | openers
    old_units, new_units = units_of(old_text), units_of(new_text)
    old_words, new_words = words_of(old_text), words_of(new_text)
    in_names = numbers_in_names(old_text) | numbers_in_names(new_text) | _numbers_after_camel(f"{old_text} {new_text}")

    def kind(value: str) -> str:
        # A code that opens with a letter ("HB20", "S21") and a number word written as a
        # name ("Three") are names, not quantities.
        if (
            value in in_names
            or value[:1].isalpha()
            and any(c.isdigit() for c in value)
            or value in names
            and value in NUMBER_WORDS
        ):
            return "word"
        return next(iter(kinds_of([value])))

    # A day or a month ("Thu", "Sept") is no value swapped here, whatever its capital: the
    # numbers' judge (renumbered.py) reads a day changed.
    old_held = {c: [v for v in _values(c, stops, names) if v not in openers and v not in CALENDAR] for c, _ in old_units}
    new_held = {
        c: [v for v in _values(c, stops, names) if v not in openers and v not in CALENDAR and not mentions(v, old_words)]
        for c, _ in new_units
    }
    pairs = [
        (oc, nc)
        for oc, ov in old_held.items()
        for nc, nv in new_held.items()
        if ov and nv and {kind(v) for v in ov} & {kind(v) for v in nv}
    ]
    if not pairs:
        return None
    sentence_of = dict(old_units) | dict(new_units)
    if openers and any(v not in openers for oc, _ in pairs for v in old_held[oc]):
        return None  # "Ana works at IBM" / "Ben works at Oracle": two people, each with a value
    # A clause that is nothing but its values ("Jools Holland.", "Adidas Copa") says no
    # slot alone: it must be as close read with its sentence ("NYE in with a takeaway curry
    # and Jools Holland." / "Bought new astro boots, Adidas Copa, ..."), or any two names
    # are close.
    held = old_held | new_held
    read = {c: sentence_of[c] if _values_alone(c, held[c], stops) else c for pair in pairs for c in pair}
    closest = closest_pair(pairs, read)
    if closest is None:
        return None
    closeness, old_c, new_c = closest
    if closeness < threshold:
        return None
    old_s = sentence_of[old_c]
    if (
        past_event(old_s, any_language=True)
        and not shares_slot_word(old_c, new_c, stops, names)
        # An event that began a state ("Switched to a Pixel 7") states it.
        and not CHANGE.search(old_s)
        and not leans(old_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, OLD_BEGINNING_MARGIN, stops, names)
    ):
        return None  # "Bought running shoes, Brooks Ghost 15" is not a phone replaced by "an iPhone 15 now"
    old_s, new_s = sentence_of[old_c], sentence_of[new_c]
    shared = {kind(v) for v in old_held[old_c]} & {kind(v) for v in new_held[new_c]}
    old_values = [v for v in dict.fromkeys(old_held[old_c]) if kind(v) in shared]
    new_values = [v for v in dict.fromkeys(new_held[new_c]) if kind(v) in shared]
    # A word of change in the new value's clause or the one before it (which often says
    # what changed: "Got a new phone. It's a Pixel 8"); one far off in a long note is of
    # something else ("... renewed the Adobe licence, backed up the NAS, ...").
    changed = _said_changed(new_c, [c for c, _ in new_units])
    pieces = list(dict.fromkeys([c for c, _ in new_units] + [s for _, s in new_units]))
    # The older value named again is still held, unless a statement naming it says it
    # was left, ended or changed ("Cracked the Pixel screen ..., on an iPhone 14 now").
    # (Not a number inside another name: "Brooks Ghost 15" / "an iPhone 15".)
    named = [v for v in old_values if mentions(v, new_words) and not (v.isdigit() and part_of_another_name(v, old_s, new_words))]
    for value in named:
        holding = [p for p in pieces if mentions(value, words_of(p))]
        if not any(
            says_ended(p, stops, names)
            or CHANGE.search(p)
            # "Maya left The Foxes to join Northbound", "Dumped Comcast, got fiber from
            # Ziply": a move from the old value, not the sentence's subject, to a new one
            # said after it, leaning to a change of state rather than a visit by meaning.
            or (_from_to(p, value, new_values) and leans(p, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, MOVED_ON_MARGIN, stops, names))
            for p in holding
        ):
            return None
    # A new value thought of, planned, denied or added beside the old one.
    if any(kept(v, pieces) for v in named):
        return None  # "..., but I'm keeping the Golf"
    new_values = [v for v in new_values if not denied(v, pieces, lang, frozenset(old_words))]
    if not new_values or HEDGED.search(new_s):
        return None  # "Não vamos nos mudar para Braga", "Might get the iPhone 16"
    if ADDITION.search(new_text) and not INSTEAD.search(new_text):
        return None
    if side_by_side(old_s, old_held[old_c]) and not INSTEAD.search(new_text):
        return None  # "I speak Dutch and English" / "Started learning Japanese": one more
    if shared == {"quantity"} and (
        not changed
        or other_thing(old_c, new_c, old_text, new_text, stops)
        or not {_form(v, old_c) for v in old_values} & {_form(v, new_c) for v in new_values}
    ):
        return None  # "The tax return is due X" / "The passport renewal is due by Y": two dates
    if (
        two_holders(old_s, new_s, stops, names)
        or holds_apart(old_c, stops, names)
        and holds_apart(new_c, stops, names)
        and not named
    ):
        return None  # "Meeting with Sarah on Monday" / "Meeting with Tom moved to Tuesday": two holders
    if PAST_FRAME.search(new_s) or PAST_FRAME.search(old_s):
        return None
    if BOUNDED.search(new_s) and not CHANGE.search(new_s):
        return None  # a stay ("in Edinburgh for the festival til Sunday")
    if said_as_past(old_c, new_c) and not CHANGE.search(new_s):
        return None
    # Whose: the writer's both, or one subject named in both.
    if someone_else(new_s, old_text, lang) or someone_else(new_c, old_text, lang):
        return None
    if someone_else(old_s, new_text, lang) and not named and not possessed_thing(old_s, lang):
        return None
    if other_subject(old_s, new_s, names, old_text, new_text) or other_owner(old_c, new_c):
        return None  # "Jake lives in X" / "Jake's brother moved to Y"
    if _someone_of(new_s, old_text, stops) or _someone_of(old_s, new_text, stops):
        return None
    if first_person(old_s, names, lang) and values_of_another(new_s, new_values, lang):
        return None  # "I live at 14a Market Street" / "Helped Kofi move into his new place, 31 Market Street"
    if other_kind(old_s, new_s, stops, names):
        return None  # "the team meeting is on X" / "the client meeting moved to Y"
    if not (first_person(old_s, names, lang) and first_person(new_s, names, lang)) and not _one_subject(
        old_s, new_s, old_words, new_words
    ):
        if slot_words_differ(old_c, new_c, stops, names):
            return None
    # One slot: after an older event that began a state ("I moved to Lyon"), a newer note
    # that tells no change (no word of change, no event, the old value not named again)
    # but states a value as it stands shares a word of the older one's slot ("I work as a
    # nurse at St Mary's": a home and a job, both kept). Read on the whole sentences: a
    # clause may hold no word beyond its verb.
    if (
        not changed
        and not named
        and past_event(old_s, any_language=True)
        and not past_event(new_s)
        and not shares_slot_word(old_s, new_s, stops, names)
    ):
        if slot_words_differ(old_s, new_s, stops, names):
            return None
    # No word of the older clause's frame is swapped for another ("favourite movie" /
    # "favourite book"), unless the newer note says it changed.
    if not changed and not named and frame_word_swapped(old_c, new_c, stops, names):
        return None
    # A state, not an event: with no change word and the old value unnamed, the newer
    # statement must lean to a beginning by meaning, not to a visit or a trip (in any
    # language: "Passei o fim de semana no Porto"); two past events are two events.
    if not changed and not named:
        if past_event(old_s) and past_event(new_s):
            return None
        if not leans(new_s, BEGINNING_ANCHORS, ONE_OFF_ANCHORS, MOVED_ON_MARGIN, stops, names):
            return None
    if not changed and leans(new_s, REFUSAL_ANCHORS, TAKING_ANCHORS, REFUSAL_MARGIN, stops, names):
        return None  # an offer declined
    return old_values, new_values, closeness


def _said_changed(clause: str, clauses: list[str]) -> bool:
    """A closed-class word of change or of taking effect in the clause or the one before."""
    order = list(dict.fromkeys(clauses))
    at = order.index(clause) if clause in order else 0
    return any(CHANGE.search(s) or EFFECTIVE.search(s) for s in order[max(at - 1, 0) : at + 1])


def _one_subject(old_s: str, new_s: str, old_words: set[str], new_words: set[str]) -> bool:
    """Both sentences open with a name the other note also has ("Tom works at X" / "Tom's
    at Y these days")."""
    first_old, first_new = (_bare((tokens_of(s) or [""])[0]) for s in (old_s, new_s))
    return any(
        first[:1].isupper() and first.lower() in other for first, other in ((first_old, new_words), (first_new, old_words))
    )


def _from_to(sentence: str, old: str, new_values: list[str]) -> bool:
    """The old value, past the sentence's subject, comes before a new value. A word of kin
    or a title before it opens the subject ("Uncle Hamish GP = Dr Fraser": Hamish is whose
    the GP is); a verb does not ("Dumped Comcast, got fiber from Ziply")."""
    words = [t.lower() for t in tokens_of(sentence)]
    at_old = next((i for i, w in enumerate(words) if i and mentions(old, {w})), None)
    if at_old == 1 and person_noun(words[0]):
        return False
    at_new = [i for i, w in enumerate(words) for v in new_values if mentions(v, {w})]
    return at_old is not None and any(i > at_old for i in at_new)


def _someone_of(sentence: str, other_text: str, stops: frozenset[str]) -> bool:
    """The sentence opens with someone's someone or something the other note does not have
    ("Jake's brother moved to Seattle" after "Jake lives in Phoenix")."""
    m = re.match(r"^\W*[A-Z][\w-]*['’]s\s+([^\W\d_][\w-]*)", sentence)
    return bool(m) and m.group(1).lower() not in stops and not similar_word(m.group(1).lower(), words_of(other_text))


def _form(value: str, clause: str) -> str:
    """An amount, a clock time, a day of the week, a month, a number: one slot holds one."""
    form = value_type(value, clause)
    if form == "time" and value.rstrip("s") in WEEKDAYS:
        return "weekday"
    return form


def _values(clause: str, stops: frozenset[str], names: frozenset[str]) -> list[str]:
    """The clause's values, and the names written with a capital inside ("iPhone", "eBay")."""
    out = values_in(clause, stops, names)
    return out + [t.lower() for t in tokens_of(clause) if _camel(t) and t.lower() not in out]


def _camel(token: str) -> bool:
    return token[:1].islower() and any(c.isupper() for c in token[1:]) and token.isalnum()


def _numbers_after_camel(text: str) -> set[str]:
    tokens = tokens_of(text)
    return {b.lower() for a, b in zip(tokens, tokens[1:]) if _camel(a) and b[:1].isdigit()}


def _bare(token: str) -> str:
    return re.split(r"['’]", token)[0]


def _values_alone(clause: str, values: list[str], stops: frozenset[str]) -> bool:
    """Whether the clause has no content word besides its values."""
    return all(w in values or any(w in v.split() for v in values) for w in content_words(clause, stops))
