"""Two notes close in meaning that the newer one's grammar keeps apart.

Recall and the offline answer put the newer of two memories that say nearly the same
first when a question asks about now (recall/newer.py, quote_order.py): that is how a
change no update check marked still reads as current. Closeness in meaning alone also
takes in a newer note that only sits beside the older fact: another thing of the same
shop ("they also sell ..."), someone else's news ("my brother got a job at ..."), a
price looked at and not taken ("it'd be $23, not worth it"), a stand-in for a while
("covering until she's back"), or another appointment set by the older one ("right after
the dentist"). Those keep their place; this says which they are, by the same closed
classes of grammar the update check reads (cues.py, subjects.py), never by phrasings of
facts.
"""

from __future__ import annotations

import re

from .. import language
from .cues import ADDITION, BOUNDED, HEDGED, PAST_FRAME, said_as_past
from ....textutil import STOPWORDS
from .statements import tokens_of, units_of, words_of
from .subjects import FIRST_PERSON, first_person, other_owner, someone_else
from .values import a_word, names_in

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


def not_a_change(old_text: str, new_text: str) -> bool:
    """Whether the newer note, by its grammar, does not replace the older one's fact,
    however close the two are in meaning."""
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
    # The writer's fact may come after what the older note opens with ("British Gas man came
    # to read the meter. We're on their fixed tariff ..." / "Joan next door has gone over to
    # Octopus ...").
    writers = any(first_person(s, names, lang) for s in old_statements)
    if writers and (someone_else(opening, old_text, lang) or _named_other_opens(opening, old_words, names, lang)):
        return True
    return (
        first_person(opening, names, lang) and bool(_OWNED_SUBJECT.match(old_opening)) and other_owner(old_opening, opening)
    )


# The third person's pronouns and possessives: the statement goes on about its subject.
_THIRD_PERSON = re.compile(r"\b(?:he|she|his|her|hers|him|they|their|them)\b", re.I)


def _named_other_opens(opening: str, old_words: set[str], names: frozenset[str], lang: str) -> bool:
    """The newer note opens with a name the older one never says, and goes on about them
    with no word of the writer's ("Joan next door has gone over to Octopus for her gas"):
    that person's news. English only: the third person's words are read in English."""
    tokens = tokens_of(opening)
    if not tokens or lang not in ("en", "") or first_person(opening, names, lang) or FIRST_PERSON.search(opening):
        return False
    if not _THIRD_PERSON.search(opening):
        return False
    first = tokens[0]
    return first[:1].isupper() and not a_word(first) and first.lower() not in old_words and first.lower() not in STOPWORDS


# A sentence whose subject is someone's thing: "Mira's number ...", "My sister Ines's
# birthday ..." (not "I work at Rosa's Diner": there the writer is the subject).
_OWNED_SUBJECT = re.compile(r"^\W*(?:(?:my|our)\s+)?(?:\w+\s+)?\w+['’]s\s", re.I)
