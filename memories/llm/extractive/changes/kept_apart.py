"""Two notes close in meaning that the newer one's grammar keeps apart.

Recall and the offline answer put the newer of two memories that say nearly the same
first when a question asks about now (recall/newer.py, quote_order.py): that is how a
change no update check marked still reads as current. Closeness in meaning alone also
takes in a newer note that only sits beside the older fact: another thing of the same
shop ("they also sell ..."), someone else's news ("my brother got a job at ..."), a
price looked at and not taken ("it'd be $23, not worth it"), a stand-in for a while
("covering until she's back"), a change for one span only ("Christmas week only"), or
another appointment set by the older one ("right after the dentist"). Those keep their
place; this says which they are, by the same closed classes of grammar the update check
reads (cues.py, subjects.py), never by phrasings of facts.
"""

from __future__ import annotations

import re

from .... import textutil
from .. import language
from .cues import ADDITION, AS_USUAL, BOUNDED, CHANGE, EFFECTIVE, HEDGED, ONE_SPAN_ONLY, PAST_FRAME, said_as_past
from .statements import units_of, words_of
from .subjects import first_person, news_of_someone_new, other_owner, someone_else
from .slots import other_thing
from .plain import value_type
from .values import names_in, values_in

# A conditional said with a contraction ("it'd be $22.99", "that'd cost more"): only
# thought of, as "would" is (cues.HEDGED reads "would", "I'd" and "we'd").
CONTRACTED_CONDITIONAL = re.compile(r"\b\w+['’]d\s+(?:be|cost|need|take|have|mean|make)\b", re.I)
# Another event set by the older note's thing: "right after the dentist", "just before
# my shift", "the day after the wedding" (the older thing is a time mark, not replaced).
_RELATIVE_TO = (
    r"\b(?:right |just |straight |the day |the week )?(?:after|before)\s+(?:the|my|our|his|her|their)\s+([^\W\d_][\w'-]*)"
)
RELATIVE_TO = re.compile(_RELATIVE_TO, re.I)
# The words that say the newer note does change something even when one of the above
# holds ("also moved", "instead", "no longer").
_STILL_A_CHANGE = re.compile(r"\b(?:instead|no longer|anymore|any more)\b", re.I)


def as_usual(old_text: str, new_text: str) -> bool:
    """A sentence of the newer note says its value is the usual one, with no word of change,
    and is about the same thing: it shares a content word with the older note or names a
    value the newer note names elsewhere ("Bought new astro boots, ..., the wide ones as
    always" after "football boots size 10, wide fit"; "Questa volta dovevo caricare a
    Padova ... Niente Padova, alla fine tutto come al solito"). Not an aside of the note
    ("... my new manager is Ikechukwu Obi. Friday pizza as usual.")."""
    sentences = textutil.sentences(new_text) or [new_text]
    stops = language.stopwords_for(f"{old_text} {new_text}")
    old_words = {w for w in words_of(old_text) if w not in stops}
    for sentence in sentences:
        # Not beside a change said in the sentence: "From next week we're in the Methodist
        # hall, 7.30 as ever" keeps the time and changes the place.
        if not AS_USUAL.search(sentence) or CHANGE.search(sentence) or EFFECTIVE.search(sentence):
            continue
        elsewhere = " ".join(s for s in sentences if s != sentence)
        values = set(values_in(sentence, stops)) & set(values_in(elsewhere, stops))
        if {w for w in words_of(sentence) if w not in stops} & old_words or values:
            return True
    return False


def not_a_change(old_text: str, new_text: str) -> bool:
    """Whether the newer note, by its grammar, does not replace the older one's fact,
    however close the two are in meaning."""
    if ONE_SPAN_ONLY.search(new_text):
        return True  # "Christmas week only, collection is Saturday instead": the standing fact holds
    if _STILL_A_CHANGE.search(new_text):
        return False
    if PAST_FRAME.search(new_text) or said_as_past(old_text, new_text):
        return True  # a time gone ("when I was at uni", "I lived in Rennes")
    statements = list(dict.fromkeys(sentence for _, sentence in units_of(new_text))) or [new_text]
    opening = statements[0]
    # What the note opens with decides: "handed the project to Sven; she's on leave until
    # May" is a handover, "Theo is covering until she's back" a stand-in for a while.
    if BOUNDED.search(opening):
        return True  # a stay or a stand-in for a while
    if CONTRACTED_CONDITIONAL.search(opening) or any(
        not m.group(0).lower().startswith("plan ") for m in HEDGED.finditer(opening)
    ):
        return True  # only thought of or weighed ("it'd be $22.99 - not worth it"); not the noun "plan"
    if ADDITION.search(new_text):
        return True  # "Square Mile also sell grinder tablets": a second thing beside the first
    old_words = words_of(old_text)
    if any(m.group(1).lower() in old_words for m in RELATIVE_TO.finditer(new_text)):
        return True  # "Booked the hygienist right after the dentist": set by the older thing
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text)
    old_statements = list(dict.fromkeys(sentence for _, sentence in units_of(old_text))) or [old_text]
    old_opening = old_statements[0]
    # The writer's own fact, and a newer note that opens about someone the older one does
    # not name ("I work at Stripe" / "My brother Cian just got a job at Intercom").
    # And the other way round: the older note is about a thing of someone ("My sister Ines's
    # birthday is ..."), the newer the writer's own, not giving it to that someone ("My line
    # manager is Ruth Ng").
    if first_person(old_opening, names, lang) and someone_else(opening, old_text, lang):
        return True
    # A date of another thing in each ("Tilly's booster done at the vets on 14 Oct" / "Car
    # booked in at the garage for its service on Fri 7 Nov"): two appointments, not one
    # moved. Not of amounts: a renewal's price is the older price's successor, though it is
    # said of "the renewal quote".
    stops = language.stopwords_for(f"{old_text} {new_text}")
    if all(any(value_type(v, s) == "time" for v in values_in(s, stops, names)) for s in (old_opening, opening)) and other_thing(
        old_opening, opening, old_text, new_text, stops
    ):
        return True
    if news_of_someone_new(old_text, new_text, lang):
        return True  # "We're on their fixed tariff ..." / "Joan next door has gone over to Octopus ..."
    return first_person(opening, names, lang) and bool(_OWNED_SUBJECT.match(old_opening)) and other_owner(old_opening, opening)


# A sentence whose subject is someone's thing: "Mira's number ...", "My sister Ines's
# birthday ..." (not "I work at Rosa's Diner": there the writer is the subject).
_OWNED_SUBJECT = re.compile(r"^\W*(?:(?:my|our)\s+)?(?:\w+\s+)?\w+['’]s\s", re.I)
