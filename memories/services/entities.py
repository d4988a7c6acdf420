"""One entity, several spellings: "Priya" and "Priya Raman" in one space are one person
when the space knows exactly one Priya with a surname. The bank's entity filter and new
memories' entities (at extraction) read the same rule."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter

from django.db.models import Q
from django.db.models.functions import Substr

from ..llm.extractive import language
from ..models import Memory
from ..recall.speaker import speaker_label

# How many memories are read to find the full forms of a first name.
SCAN = 500


def _prefixed(value: str) -> Q:
    escaped = json.dumps(value)[:-1]
    q = Q(entities__icontains=f'"{value} ')
    return q | Q(entities__icontains=f"{escaped} ") if escaped != f'"{value}' else q


def full_names(*, owner, first: str) -> set[str]:
    """The multi-word entities of the space that start with this one word."""
    if not first or " " in first:
        return set()
    rows = Memory.objects.owned_by(owner).filter(_prefixed(first)).values_list("entities", flat=True)[:SCAN]
    return {
        str(e) for row in rows for e in row or [] if str(e).startswith(first + " ") and str(e)[len(first) + 1 :][:1].isupper()
    }


def canonical(*, owner, entities: list[str], text: str = "") -> list[str]:
    """A lone first name becomes the one full name the space knows for it. A word that
    only opens sentences in `text` and that the owner writes in lower case where case is
    free ("gestern", "leider", "mañana"), and never capitalised there, is no name; nor is
    a word the owner's German notes put after an article ("der Spaß", "die Kinder")."""
    out: dict[str, None] = {}
    if text:
        entities = [e for e in entities if not _ordinary_word(owner, e, text)]
    for entity in entities:
        if " " not in entity and entity[:1].isupper() and not entity.isupper():
            names = full_names(owner=owner, first=entity)
            if len(names) == 1:
                entity = names.pop()
        out.setdefault(entity, None)
    return list(out)


def spellings(*, owner, entity: str) -> list[str]:
    """Every spelling the filter should match for this entity in this space."""
    names = {entity}
    if " " not in entity:
        full = full_names(owner=owner, first=entity)
        if len(full) == 1:
            names |= full
    else:
        first = entity.split()[0]
        if full_names(owner=owner, first=first) == {entity}:
            names.add(first)
    return sorted(names)


# How the owner writes each word where its case is free (past a sentence's first word),
# read from their newest notes: a language's adverbs ("Gestern habe ich", "Leider",
# "Mañana tengo") open sentences capitalised, and only the owner's own lower-case uses say
# they are words, in any language and with no list. Kept per owner and brought up to date
# with the notes added since (read again whole after CASING_SECONDS).
CASING_FROM_NEWEST = 1000
CASING_CHARS = 2000
CASING_SECONDS = 600.0
OPENS_ONLY = 2
LANGUAGE_SAMPLE = 400
_casing: dict[tuple, tuple[float, int, Counter, Counter]] = {}
_casing_lock = threading.Lock()
_SENTENCE = re.compile(r"[^.!?:;\n]+")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def _count_casing(text: str, lower: Counter, upper: Counter) -> None:
    """lower: a word's lower-case uses past a sentence's first word; upper: its capitalised
    uses there (by its lower-case form), under ("^", word) how many sentences it opens, and
    under ("det", word) how many of its capitalised uses follow a determiner in a language
    that capitalises its nouns ("die Wohnung", "viel Spaß" and "der Spaß").
    A speaker's label ("Ann: ...") opens every line of a transcript and is a name: it
    counts as capitalised where case is free."""
    for word in _WORD.findall(speaker_label(text)):
        upper[word.lower()] += 1
    # The language from the note's opening (a short sample: every note of a backlog is read).
    determiners = language.determiners_of(language.language_of(text[:LANGUAGE_SAMPLE])) if text else frozenset()
    for sentence in _SENTENCE.findall(text):
        words = _WORD.findall(sentence)
        if words and words[0][0].isupper():
            upper[("^", words[0].lower())] += 1
        for before, word in zip(words, words[1:]):
            if word[0].islower():
                lower[word] += 1
            elif word[0].isupper() and not word.isupper():
                upper[word.lower()] += 1
                if before.lower() in determiners:
                    upper[("det", word.lower())] += 1


def owner_casing(owner) -> tuple[Counter, Counter]:
    """(lower-case uses, capitalised uses) of each word past a sentence's first, in the
    owner's newest notes."""
    key = (owner.pk, getattr(owner, "date_joined", None))
    now = time.monotonic()
    with _casing_lock:
        cached = _casing.get(key)
    rows = Memory.objects.owned_by(owner).order_by("-pk")
    newest = rows.values_list("pk", flat=True).first() or 0
    if cached and now - cached[0] < CASING_SECONDS and cached[1] <= newest:
        started, lower, upper = cached[0], Counter(cached[2]), Counter(cached[3])
        rows = rows.filter(pk__gt=cached[1])
    else:
        started, lower, upper = now, Counter(), Counter()
    heads = rows.annotate(head=Substr("raw_text", 1, CASING_CHARS)).values_list("head", flat=True)[:CASING_FROM_NEWEST]
    for head in heads:
        _count_casing(head or "", lower, upper)
    with _casing_lock:
        _casing[key] = (started, newest, lower, upper)
    return lower, upper


# Where nouns are capitalised (German), a word the owner writes after an article at
# least this share of the times it is capitalised mid-sentence is a noun, not a name:
# names go without one ("mit Anna", "in Leipzig").
NOUN_ARTICLE_SHARE = 0.5


def _noun(low: str, here: Counter, owner: Counter) -> bool:
    after_article = here[("det", low)] + owner[("det", low)]
    return after_article > 0 and after_article >= NOUN_ARTICLE_SHARE * (here[low] + owner[low])


def _ordinary_word(owner, entity: str, text: str) -> bool:
    if " " in entity or not entity[:1].isupper() or entity.isupper():
        return False
    low = entity.lower()
    here_lower, here_upper = Counter(), Counter()
    _count_casing(text, here_lower, here_upper)
    lower, upper = owner_casing(owner)
    if _noun(low, here_upper, upper):
        return True
    if here_upper[low]:
        return False  # capitalised where case is free: a name
    if upper[low]:
        return False
    # Written in lower case where case is free, or opening sentence after sentence and
    # never anywhere else (a name is also said mid-sentence: "with Lena", "called Pepper").
    opens = max(upper[("^", low)], here_upper[("^", low)])
    return (lower[low] + here_lower[low]) > 0 or opens >= OPENS_ONLY
