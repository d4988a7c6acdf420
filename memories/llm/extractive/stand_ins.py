"""A thing the question names that a line says in other words: "Where is my father
staying?" is answered by "Dad moved to Ashgrove House", "What's our home address?" by "Our
address is 12 Birch Lane" ("home" adds nothing to "address").

Read by meaning at the level of the question, as near_miss.py reads a neighbour: the line's
word nearest in meaning to the unsaid one is put in its place, or the unsaid word is left
out, and the question asked so must mean the same as the one asked. A synonym leaves it
the same, a sibling or a neighbour does not: on multilingual-e5-small, father/dad and
children/kids 0.996, home address/address 0.988, phone number/mobile number 0.979 and
phone number/number 0.982, against mother for father 0.951, sister for brother 0.942, dog
for cat 0.933, blood type/type 0.954, car service/service 0.969, swimming pool/pool 0.970.
Without an embedding layer nothing is said in other words.
"""

from __future__ import annotations

import re

import numpy as np

from ... import textutil
from . import similarity
from .asked_about import plain_words, words_not_asked

# How close (cosine of the two questions, as queries) the question asked with the line's
# word, or without the unsaid one, must be to the question asked (see the docstring).
SAME_QUESTION = 0.975


def said_otherwise(question: str, word: str, line: str) -> bool:
    """Whether `line` says `word` (a thing the question names, not in the line) in other
    words, or the question asks the same without it (a modifier: "home" in "home address")."""
    pattern = re.compile(rf"\b{re.escape(word)}\b", re.I)
    if not pattern.search(question):
        return False
    candidates = words_not_asked(line, question)
    variants = []
    if _modifies(question, word, line):
        variants.append(" ".join(pattern.sub("", question, count=1).split()))
    if candidates:
        vectors = similarity.document_vectors([word, *candidates])
        if vectors is None:
            return False
        stand_in = candidates[int(np.argmax(vectors[1:] @ vectors[0]))]
        variants.append(pattern.sub(stand_in, question))
    if not variants:
        return False
    asked = similarity.meaning_vectors([question, *variants], query=True)
    if asked is None or len(asked) != 1 + len(variants):
        return False
    return float(np.max(asked[1:] @ asked[0])) >= SAME_QUESTION


def _modifies(question: str, word: str, line: str) -> bool:
    """Whether `word` stands before another open-class word of the question that the line
    says, as "home" before "address" in "What's our home address?" / "Our address is ...":
    a modifier of what the line says may be left out. Not the head of a phrase ("the name
    of Amara's agency": the question left without it is no question), nor a modifier of a
    word the line does not say either ("my sister's phone number" / "Ana moved to Lisbon")."""
    words = plain_words(question)
    line_stems = set(textutil.terms(line))
    return any(
        w == word.lower()
        and i + 1 < len(words)
        and words[i + 1] not in textutil.STOPWORDS
        and set(textutil.terms(words[i + 1])) <= line_stems
        and not _modified_otherwise(words[i + 1], line)
        for i, w in enumerate(words)
    )


def _modified_otherwise(head: str, line: str) -> bool:
    """Whether every time the line says `head` another open-class word stands before it:
    "Book club pick" for "my cinema club" is a sibling of the thing asked, not the thing
    with a modifier left out ("Our address is ..." for "our home address")."""
    words = plain_words(line)
    stems = set(textutil.terms(head))
    places = [i for i, w in enumerate(words) if stems and set(textutil.terms(w)) == stems]
    return bool(places) and all(i > 0 and words[i - 1] not in textutil.STOPWORDS and not words[i - 1].isdigit() for i in places)
