"""A slot restated with another value in common nouns ("green tea" -> "black coffee now").

The other judgements take a value to be a name, a number, a code or an address, so a
change told in lower case ("oat latte these days", "weekends are for padel now") holds
no value for them. Here a value is found by grammar and meaning instead: the content
words each clause has that the other note does not say at all are the values; masked,
what is left of the two clauses (their frames) must mean one slot for the embedding
model, the newer clause must say that it changed (the closed class of change words, or
a value taking effect from a date), and the rest of the evidence must allow a change:
the writer's own fact on both sides (or the same named subject), no addition, no plan,
no denial, no time gone, no stay, no offer declined.
"""

from __future__ import annotations

import re

import numpy as np

from .... import textutil
from .. import language, similarity
from .anchors import REFUSAL_ANCHORS, REFUSAL_MARGIN, TAKING_ANCHORS, leans
from .cues import (
    ADDITION,
    BOUNDED,
    CHANGE,
    EFFECTIVE,
    HEDGED,
    NOT_A_THING,
    PAST_FRAME,
    TEMPORARY,
    negated,
    past_event,
    said_as_past,
)
from .slots import compounded, shares_slot_word
from .statements import content_words, similar_word, tokens_of, units_of, words_of
from .subjects import first_person, other_owner, other_subject, someone_else
from .values import PLACEHOLDER, TIME_WORDS, is_quantity, names_in, parallel_openers

# Cosine (multilingual-e5-small) of the two clauses with their differing words masked from
# which they are one slot. Calibrated on the pairs of every scenario file of tests/data and
# on dev scenarios: see CHANGELOG, round 16.
SAME_FRAME = 0.90
# The clauses as written must already be near: the masked frames alone grow alike when
# most of their words are masked.
RAW_FLOOR = 0.82
# At most this many differing words a side: a value is a short noun phrase, not a clause.
MAX_VALUE_WORDS = 5


def differing_words(clause: str, other_text: str, stops: frozenset[str], names: frozenset[str] = frozenset()) -> list[str]:
    """The clause's content words the other note does not say in any form: not words of
    time ("mornings", "these days"), change words, quantities or names (the other judges
    read those)."""
    other = words_of(other_text)
    return [
        w
        for w in dict.fromkeys(content_words(clause, stops))
        if not similar_word(w, other)
        and w not in names
        and not _adverb(w)
        and not CHANGE.fullmatch(w)
        and textutil.stem(w) not in NOT_A_THING
        and w not in TIME_WORDS
        and w.rstrip("s") not in TIME_WORDS
        and not is_quantity(w)
    ]


def one_span(clause: str, words: list[str], stops: frozenset[str]) -> bool:
    """The words make one noun phrase of the clause: consecutive but for stopwords between
    them ("a mug of builder's tea"), not two places of its frame ("work ... as an engineer")."""
    positions = [i for i, t in enumerate(tokens_of(clause)) if t.lower() in words]
    if not positions:
        return False
    tokens = tokens_of(clause)
    between = tokens[positions[0] : positions[-1] + 1]
    return all(t.lower() in words or t.lower() in stops or _adverb(t.lower()) for t in between)


def _adverb(word: str) -> bool:
    """An adverb of manner or degree ("usually", "mostly"): the English "-ly" is grammar's
    mark; it says how, not what, and is neither the value nor the slot."""
    return word.endswith("ly") and len(word) > 4


def mask_words(clause: str, words: list[str]) -> str:
    """The clause with the words masked (a run of them is one placeholder) and its adverbs
    of manner dropped."""
    out = " ".join(t for t in clause.split() if not _adverb(t.strip(".,;:!?").lower()))
    for word in sorted(words, key=len, reverse=True):
        out = re.sub(rf"(?i)(?<![\w@.]){re.escape(word)}(?![\w@])", PLACEHOLDER, out)
    return re.sub(rf"{PLACEHOLDER}(?:[\s,.'’-]+{PLACEHOLDER})+", PLACEHOLDER, out)


def restated(old_text: str, new_text: str):
    """(old values, new values, closeness) when the newer note says the older one's slot
    changed to another value in common nouns; else None."""
    if not CHANGE.search(new_text) and not EFFECTIVE.search(new_text):
        return None
    old_units, new_units = units_of(old_text), units_of(new_text)
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text) | parallel_openers(old_text, new_text)
    pairs = []
    for old_c, old_s in old_units:
        old_diff = differing_words(old_c, new_text, stops, names)
        if not old_diff or len(old_diff) > MAX_VALUE_WORDS or not one_span(old_c, old_diff, stops):
            continue
        for new_c, new_s in new_units:
            new_diff = differing_words(new_c, old_text, stops, names)
            if new_diff and len(new_diff) <= MAX_VALUE_WORDS and one_span(new_c, new_diff, stops):
                pairs.append((old_c, old_s, new_c, new_s, old_diff, new_diff))
    if not pairs:
        return None
    clauses = [p[0] for p in pairs] + [p[2] for p in pairs]
    masked = [mask_words(p[0], p[4]) for p in pairs] + [mask_words(p[2], p[5]) for p in pairs]
    vectors = similarity.meaning_vectors(clauses + masked)
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(pairs)
    for i in sorted(range(n), key=lambda i: -float(vectors[2 * n + i] @ vectors[3 * n + i])):
        raw = float(vectors[i] @ vectors[n + i])
        frame = float(vectors[2 * n + i] @ vectors[3 * n + i])
        if frame < SAME_FRAME:
            break
        if raw < RAW_FLOOR:
            continue
        old_c, old_s, new_c, new_s, old_diff, new_diff = pairs[i]
        if _allows_change(old_c, old_s, new_c, new_s, old_text, new_text, stops, names, lang):
            return tuple(old_diff), tuple(new_diff), frame
    return None


def _allows_change(old_c, old_s, new_c, new_s, old_text, new_text, stops, names, lang) -> bool:
    if old_s.rstrip().endswith("?") or new_s.rstrip().endswith("?"):
        return False
    # The change word in the clause's own sentence, or a date it takes effect from.
    if not CHANGE.search(new_s) and not EFFECTIVE.search(new_s):
        return False
    whole = " ".join(textutil.sentences(new_text)) or new_text
    if ADDITION.search(whole) and not re.search(r"\b(?:instead|no longer|anymore)\b", whole, re.I):
        return False
    if HEDGED.search(new_s) or PAST_FRAME.search(new_s) or PAST_FRAME.search(old_s):
        return False
    if (BOUNDED.search(new_s) or TEMPORARY.search(new_s)) and not EFFECTIVE.search(new_s):
        return False
    if said_as_past(old_c, new_c) or past_event(old_s, any_language=True):
        return False
    if negated(new_c, lang, frozenset(words_of(old_text))):
        return False
    # Whose: both the writer's, or the same named subject opening both clauses.
    opener_old, opener_new = (tokens_of(old_c) or [""])[0], (tokens_of(new_c) or [""])[0]
    same_named = opener_old[:1].isupper() and opener_old.lower() == opener_new.lower() and opener_old.lower() in names
    writers = first_person(old_s, names, lang) and first_person(new_s, names, lang)
    if not (writers or same_named):
        # A sentence with no subject of its own ("Mornings are a double espresso now")
        # states the writer's slot when the older one is the writer's and names no one.
        if not (first_person(old_s, names, lang) and not _names_someone(new_s, names, lang)):
            return False
    if someone_else(new_s, old_text, lang) or someone_else(old_s, new_text, lang):
        return False
    if other_subject(old_s, new_s, names, old_text, new_text) or other_owner(old_c, new_c):
        return False
    # The slot's own word in both, in any form ("weekend" / "Weekends", "trabajo", "hair
    # cut" / "Haircuts"): closeness of two frames alone is no slot.
    if not (shares_slot_word(old_c, new_c, stops, names) or compounded(old_c, new_c) or compounded(new_c, old_c)):
        return False
    if leans(new_s, REFUSAL_ANCHORS, TAKING_ANCHORS, REFUSAL_MARGIN, stops, names):
        return False
    return True


def _names_someone(sentence: str, names: frozenset[str], lang: str) -> bool:
    tokens = tokens_of(sentence)
    return any(t.lower() in names and t[:1].isupper() for t in tokens) or bool(
        re.search(r"\b(?:he|she|they|his|her|their)\b", sentence, re.I)
    )
