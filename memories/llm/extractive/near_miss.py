"""A line about a neighbour of the thing asked: "Who is the cat's vet?" over "Took Pixel (the
dog) to Dr Alvarez at Greenway Vets", "When is my brother's birthday?" over "My sister
Hana's birthday is on 14 August", "What is my favourite film?" over "Favourite podcast
lately: Hardcore History". The line says part of what the question names (the vet, the
birthday, "favourite") and, where the rest should be, another member of the same class.

Read by meaning at the level of the phrase, not of the whole note: for a word the question
names that the line does not say, the line's word nearest to it in meaning stands in its
place ("dog" for "cat"), and the question is asked again with it ("Who is the dog's vet?").
When the line is clearly nearer the question that says its own word than the one asked,
and saying that word changes the question, the line answers another question. A synonym
("wifi" for "internet", "manager" for "boss", "physio") barely changes the question and the
line hardly moves; a sibling ("dog" for "cat", "sister" for "brother") does both. e5 puts
synonyms and siblings equally near as words (cat/dog 0.92, internet/wifi 0.94), so the
word's closeness alone cannot tell them; the question asked both ways can.

Only when the line says at least one other thing the question names (the anchor): "Which
gym am I a member of?" is answered by "Signed up at The Foundry climbing wall", a line that
says nothing the question names and gives an instance of it.
"""

from __future__ import annotations

import re

import numpy as np

from ... import textutil
from . import said_as, similarity, stand_ins
from .asked_about import asked_nouns, words_not_asked

# How much the line's own word must move it towards the question, less how much that word
# leaves the question the same (1 - cosine of the question asked both ways, from BASE):
# twenty-two pairs written for this (eleven siblings, eleven synonyms or instances):
# siblings at 0.025 to 0.110 on this scale, synonyms with an anchor at -0.016 to 0.028.
BASE = 0.95
MIN_CONTRAST = 0.035


def stands_for_another(question: str, line: str, line_stems: frozenset[str] | set[str], names: set[str]) -> bool:
    """Whether `line` (its stems, with the turns it answers) says part of what the question
    names and a neighbour of the rest in its place (module docstring). False without an
    embedding layer: words alone cannot tell a sibling from a synonym."""
    nouns = [w for w in dict.fromkeys(asked_nouns(question)) if w not in names and w not in textutil.STOPWORDS]
    said = [w for w in nouns if said_as.spelled(textutil.terms(w)) & line_stems]
    unsaid = [w for w in nouns if textutil.terms(w) and not said_as.spelled(textutil.terms(w)) & line_stems]
    if not said or not unsaid:
        return False
    # A month or a weekday is the value the line gives (a date), not a thing standing in
    # the place of one the question names: "dentist -> 4 April 10:15" is no "dentist
    # April" for "When is my dentist appointment?". Unless a date is what it would stand
    # for ("the March meeting" / "the April meeting").
    dated = any(said_as.calendar(w) for w in unsaid)
    candidates = [w for w in words_not_asked(line, question) if dated or not said_as.calendar(w)]
    if not candidates:
        return False
    vectors = similarity.document_vectors([*unsaid, *candidates, line])
    if vectors is None:
        return False
    words, candidate_vectors, line_vector = vectors[: len(unsaid)], vectors[len(unsaid) : -1], vectors[-1]
    for word, vector in zip(unsaid, words, strict=True):
        if stand_ins.said_otherwise(question, word, line):
            continue  # a synonym in its place, or a word the question asks the same without
        stand_in = candidates[int(np.argmax(candidate_vectors @ vector))]
        again = re.sub(rf"\b{re.escape(word)}\b", stand_in, question, flags=re.I)
        if again == question:
            continue
        asked = similarity.meaning_vectors([question, again], query=True)
        if asked is None or len(asked) != 2:
            return False
        nearer = float(line_vector @ asked[1] - line_vector @ asked[0])
        changed = BASE - float(asked[0] @ asked[1])
        if nearer + changed >= MIN_CONTRAST:
            return True
    return False


# A noun a numeral follows names one of a series ("week 2", "plot 14", "flat 3").
_NUMBERED = re.compile(r"\b([^\W\d_][\w-]*)\s+(\d+)\b")


def numbered_apart(question: str, line: str) -> bool:
    """Whether the line numbers a thing of the series the question asks about otherwise:
    "How far did I run in week 2?" over "week 1 done". Words alone: the numeral tells the
    member of the series, and a different one is another member. Months and days are no
    series here ("May 3" is a date)."""
    asked = _numbered(question)
    if not asked:
        return False
    given = _numbered(line)
    return any(noun in given and not numbers & given[noun] for noun, numbers in asked.items())


def _numbered(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for word, number in _NUMBERED.findall(text):
        low = word.lower()
        if low in textutil.STOPWORDS or said_as.calendar(low):
            continue
        out.setdefault(textutil.stem(low), set()).add(number.lstrip("0") or "0")
    return out
