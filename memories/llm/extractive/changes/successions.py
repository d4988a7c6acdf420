"""An end and a successor told in two statements of one note ("Marta stepped down; Joon is
heading payments now" after "Marta leads the payments team"; "Noah finished with Mrs.
Beaumont in June; since September his piano lessons are with Viktor Hale").

The other judgements read one clause against the older one's: here neither clause holds
both values. One statement of the newer note names the older value and says, by the
embedding model or the closed class of endings, that it ended; another statement of the
same note keeps the older slot (a word of it in common, or its clause as close in meaning
as a changed slot is; or the ending statement names the slot: "Dave stepped down from
being rep. Amara Lewis took it on") and names a new value of the older value's kind that
the older note does not (a name opening it counts). The end told beside it is the change:
the successor's statement needs no word of change of its own (round 31).
"""

from __future__ import annotations

import re

import numpy as np

from .. import language, similarity
from .anchors import ENDING_MARGIN_NAMED, SAME_SLOT_WITH_CUE, leans, says_ended
from .cues import HEDGED, PAST_FRAME, TEMPORARY, THIS_SPAN, negated
from .plain import reads_as_name
from .slots import shares_slot_word
from .statements import mentions, tokens_of, units_of, words_of
from .subjects import someone_else
from .values import is_quantity, kinds_of, mask_values, names_in, parallel_openers, values_in

# Someone gone from a role for good, against away for a while: prototypes read by the
# embedding model (no list of verbs), calibrated on the dev notes (CHANGELOG, round 18).
GONE_ANCHORS = ("X left X.", "X retired.", "X quit X.", "X stepped down.", "X is gone now.")
AWHILE_ANCHORS = ("X is on holiday.", "X is on leave.", "X is away for a while.", "X is off sick.")


def succeeded(old_text: str, new_text: str):
    """(old values, new values, closeness) when one statement of the newer note ends the
    older note's value and another gives its successor; else None."""
    if TEMPORARY.search(new_text) or THIS_SPAN.search(new_text):
        return None  # "Priya is off next week, Dev covers": a stand-in for a while
    old_units, new_units = units_of(old_text), units_of(new_text)
    statements = list(dict.fromkeys(s for _, s in new_units))
    if len(statements) < 2:
        return None
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text) | parallel_openers(old_text, new_text)
    old_words = words_of(old_text)
    # The older values: its values, and a name that opens it (the holder of "Marta leads ...").
    old_values = {}
    old_sentence = {}
    for old_c, old_s in old_units:
        found = list(values_in(old_c, stops, names))
        opener = (tokens_of(old_c) or [""])[0]
        # (or a capitalised word that opens a statement of the newer note too: "Dana ...")
        opens_new = any((tokens_of(s) or [""])[0] == opener for s in statements)
        if opener[:1].isupper() and (opener.lower() in names or reads_as_name(opener, stops) or opens_new):
            found.append(opener.lower())
        for v in found:
            if v.lower() not in stops and not is_quantity(v):
                old_values.setdefault(v, old_c)
                old_sentence.setdefault(v, old_s)
    if not old_values:
        return None
    endings = [
        (s, [v for v in old_values if mentions(v, words_of(s)) and _named_as_written(v, old_values[v], s)])
        for s in statements
        if not HEDGED.search(s) and not PAST_FRAME.search(s) and not negated(s, lang, frozenset(old_words))
    ]
    # The ending names the older value, a word of change beside it or not ("Bernadette's
    # moved over to days"): read with the looser margin of a named ending.
    endings = [(s, vs) for s, vs in endings if vs and says_ended(s, stops, names, ENDING_MARGIN_NAMED)]
    # An end, not an absence for a while ("Marta went on holiday; Joon is covering now").
    endings = [(s, vs) for s, vs in endings if leans(s, GONE_ANCHORS, AWHILE_ANCHORS, 0.0, stops, names)]
    if not endings:
        return None
    for ended_s, ended in endings:
        old_c = old_values[ended[0]]
        for piece in statements:
            if piece == ended_s or HEDGED.search(piece) or PAST_FRAME.search(piece):
                continue
            if someone_else(piece, old_text, lang) and not mentions(ended[0], words_of(new_text)):
                continue
            # The successor: the piece's values, and a name that opens it ("Marie (Jo's
            # sister) is doing our bookings").
            found = list(values_in(piece, stops, names))
            opener = (tokens_of(piece) or [""])[0]
            if opener[:1].isupper() and (opener.lower() in names or reads_as_name(opener, stops)):
                found.append(opener.lower())
            news = [v for v in dict.fromkeys(found) if not mentions(v, old_words) and not is_quantity(v) and v not in stops]
            news = [v for v in news if not kinds_of([v]).isdisjoint(kinds_of(ended) or {"word"})]
            if not news:
                continue
            closeness = _closeness(old_c, piece, stops, names)
            if shares_slot_word(old_c, piece, stops, names) or closeness >= SAME_SLOT_WITH_CUE:
                return tuple(ended), tuple(news), closeness
            # The ending names the slot the successor takes on ("Dave stepped down from
            # being rep. Amara Lewis took it on" after "RCN rep for our ward: Dave").
            if shares_slot_word(old_sentence[ended[0]], ended_s, stops, names | set(ended)):
                return tuple(ended), tuple(news), closeness
    return None


def _named_as_written(value: str, old_clause: str, statement: str) -> bool:
    """A value the older note writes as a name (a capital inside a sentence) is named again
    only as a name: "last day" does not name "The Remains of the Day"."""
    written = re.search(rf"(?<=\w\W)\b{re.escape(value)}\b", old_clause, re.I)
    if not written or not written.group(0)[:1].isupper():
        return True
    return any(m.group(0)[:1].isupper() for m in re.finditer(rf"\b{re.escape(value)}\b", statement, re.I))


def _closeness(old_c: str, piece: str, stops: frozenset[str], names: frozenset[str]) -> float:
    """The two clauses' meaning, their values masked (0.0 without the model)."""
    vectors = similarity.meaning_vectors([mask_values(old_c, stops, names), mask_values(piece, stops, names)])
    if vectors is None:
        return 0.0
    vectors = np.asarray(vectors, dtype=np.float32)
    return float(vectors[0] @ vectors[1])
