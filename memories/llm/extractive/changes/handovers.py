"""A role handed from one person to another ("Karim handed the payments project over to
Elif" after "Karim runs the payments project").

The holder opens both clauses (the older note's subject, or the value its slot names),
so no value differs where the other judgements look for one: the older clause names no
value that the newer one leaves out. Here the newer clause opens with the older holder,
names a new person the older note does not, keeps the slot (a word of it in common, or
its clause close in meaning), and means, for the embedding model, a handing over rather
than a working together, telling, or showing ("X handed X over to X." against "X works
on X with X."): a verb of handing is read by meaning, in any wording or language.
"""

from __future__ import annotations

import re

import numpy as np

from .. import language, similarity
from .anchors import SAME_SLOT_WITH_CUE, leans
from .cues import ADDITION, HEDGED, PAST_FRAME, TEMPORARY, negated
from .plain import reads_as_name
from .slots import modifier_of_another, shares_slot_word
from .statements import IS_OR_HAS_NEXT, content_words, tokens_of, units_of, without_possessive, words_of
from .values import is_quantity, mask_values, names_in, parallel_openers, values_in

# What a handover means, against what someone does with another person and keeps the role.
HANDOVER_ANCHORS = (
    "X handed X over to X.",
    "X passed X on to X.",
    "X gave X to X.",
    "X left X to X.",
    "X transferred X to X.",
    "X handed over X to X.",
)
WITH_ANCHORS = (
    "X works on X with X.",
    "X shares X with X.",
    "X showed X to X.",
    "X told X about X.",
    "X presented X to X.",
    "X met X about X.",
    "X thanked X for X.",
    "X asked X for help with X.",
)
# A role taken, told by its taker ("Carol's taken over Mum's money from Neil"), against
# what one person gets from another and leaves the other holding.
TAKEOVER_ANCHORS = (
    "X took over X from X.",
    "X has taken over X from X.",
    "X took X over from X.",
    "X inherited X from X.",
    "X replaced X as X.",
)
FROM_ANCHORS = (
    "X borrowed X from X.",
    "X got X from X.",
    "X bought X from X.",
    "X heard about X from X.",
    "X learned X from X.",
    "X received X from X.",
    "X got a lift from X.",
    "X got help with X from X.",
)
# Calibrated on the handovers of tests/data/updates*.json and dev look-alikes (a role
# shared, shown, presented, a meeting): CHANGELOG, round 16.
HANDOVER_MARGIN = 0.008
# A clause opening with a possessor ("Dan's mum ..."), not with "Dan's been ...".
_POSSESSOR_OPENS = re.compile(rf"^\W*[\w-]+['’]s\s+(?!{IS_OR_HAS_NEXT})\w", re.I)
# Whom a thing handed goes to: a preposition of the recipient before the taker ("over to
# Elif", "an Elif", "à Elif", "a Elif", "para a Elif"), a closed class of each grammar.
# Not "in to", a place gone into ("Hamish moved in to Anniesland Court").
_RECIPIENT = r"(?<!\bin )\b(?:to|an|à|a|al|ao|para|alla|zu)\s+(?:(?:the|la|el|o|a|il|der|die|den)\s+)?"
# Whom a thing is taken from: a preposition of the source before the holder, a closed
# class of each grammar ("from Neil", "von Neil", "de Neil", "van Neil", "od Neila").
_SOURCE = r"\b(?:from|von|de|da|van|od|di|från|fra)\s+"
_HAS_VERB_OVER = re.compile(r"^\W*[\w-]+['’]s\s+\w+\s+over\b", re.I)
# Two values side by side in one role ("Aisha and Tomasz ran ..."), not one handing it on.
_TOGETHER = r"\s*(?:,|&|\band\b|\bwith\b|\by\b|\bund\b|\bet\b|\be\b)\s*"


def _read(old_text: str, new_text: str):
    """The two notes' clauses, stopwords, language, names and the older note's words."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text) | parallel_openers(old_text, new_text)
    return units_of(old_text), units_of(new_text), stops, lang, names, words_of(old_text)


def _holders(old_c: str, stops: frozenset[str], names: frozenset[str]) -> set[str]:
    """Who holds the older clause's role: its capitalised words that read as names."""
    holders = {
        t.lower()
        for i, t in enumerate(tokens_of(old_c))
        if t[:1].isupper() and (i > 0 or t.lower() in names or reads_as_name(t, stops))
    }
    return {h for h in holders if h not in stops and not is_quantity(h)}


def handed_over(old_text: str, new_text: str):
    """(old holder, new holder, closeness) when the newer note hands the older one's role
    from its holder to another person; else None."""
    old_units, new_units, stops, lang, names, old_words = _read(old_text, new_text)
    candidates = []
    for old_c, _ in old_units:
        holders = _holders(old_c, stops, names)
        for new_c, new_s in new_units:
            tokens = tokens_of(new_c)
            opener = (tokens or [""])[0]
            if opener.lower() not in holders or not opener[:1].isupper():
                continue
            if _POSSESSOR_OPENS.match(new_c):
                continue  # "Dan's mum coming Sunday": the mum is the clause's subject, not Dan
            takers = [
                v for v in values_in(new_c, stops, names) if v != opener.lower() and v not in old_words and not is_quantity(v)
            ]
            if not takers:
                continue
            candidates.append((old_c, new_c, new_s, opener.lower(), takers))
    if not candidates:
        return None
    vectors = similarity.meaning_vectors(
        [mask_values(c[0], stops, names | {c[3]}) for c in candidates]
        + [mask_values(c[1], stops, names | {c[3]}) for c in candidates]
    )
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(candidates)
    for i, (old_c, new_c, new_s, holder, takers) in enumerate(candidates):
        closeness = float(vectors[i] @ vectors[n + i])
        if closeness < SAME_SLOT_WITH_CUE and not shares_slot_word(old_c, new_c, stops, names | {holder}):
            continue
        # Handing takes a thing handed: a word beside the verb, the holder and the taker
        # ("handed the pager to Mei"), not only a place gone to ("Sam moved to Canada").
        things = [w for w in content_words(new_c, stops) if w != holder and w not in takers and not is_quantity(w)]
        if len(things) < 2:
            continue
        if (
            ADDITION.search(new_s)
            or HEDGED.search(new_s)
            or PAST_FRAME.search(new_s)
            or negated(new_c, lang, frozenset(old_words))
        ):
            continue
        if TEMPORARY.search(new_c):
            continue  # "Priya hands the standup to Dev next week": for a while
        if modifier_of_another(old_c, new_c, stops, names):
            continue  # "Golf insurance renewed with Admiral": the Golf's insurance, no holder acting
        low = new_c.lower()
        if any(re.search(rf"\b{re.escape(holder)}{_TOGETHER}{re.escape(t)}\b", low) for t in takers):
            continue  # "Karim and Elif run the project"
        if not any(re.search(rf"{_RECIPIENT}{re.escape(t)}\b", low) for t in takers):
            continue  # "User got a MacBook Air as the replacement": a thing got, no one it went to
        if leans(new_c, HANDOVER_ANCHORS, WITH_ANCHORS, HANDOVER_MARGIN, stops, names | {holder}):
            return (holder,), tuple(takers), closeness
    return None


def taken_over(old_text: str, new_text: str):
    """(old holder, new holder, closeness) when the newer note says, in the taker's words,
    that a person took the older note's role from its holder ("Neil does Mum's bills" /
    "Carol's taken over Mum's money stuff from Neil"); else None."""
    old_units, new_units, stops, lang, names, old_words = _read(old_text, new_text)
    candidates = []
    for old_c, _ in old_units:
        holders = _holders(old_c, stops, names)
        for new_c, new_s in new_units:
            opener = (tokens_of(new_c) or [""])[0]
            taker = without_possessive(opener).lower()
            # The taker opens the clause, is a person the older note does not name, and
            # owns nothing there: "Carol's mum took over" is the mum's doing, while a word
            # followed by the particle is a verb ("Carol's taken over", has taken over).
            if not opener[:1].isupper() or taker in old_words or taker in stops:
                continue
            if _POSSESSOR_OPENS.match(new_c) and not _HAS_VERB_OVER.match(new_c):
                continue
            low = new_c.lower()
            given_up = [h for h in holders if re.search(rf"{_SOURCE}{re.escape(h)}\b", low)]
            if given_up:
                candidates.append((old_c, new_c, new_s, given_up[0], taker, opener.lower()))
    if not candidates:
        return None
    vectors = similarity.meaning_vectors(
        [mask_values(c[0], stops, names | {c[3]}) for c in candidates]
        + [mask_values(c[1], stops, names | {c[3], c[4], c[5]}) for c in candidates]
    )
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n = len(candidates)
    for i, (old_c, new_c, new_s, holder, taker, opener) in enumerate(candidates):
        closeness = float(vectors[i] @ vectors[n + i])
        if closeness < SAME_SLOT_WITH_CUE and not shares_slot_word(old_c, new_c, stops, names | {holder, taker, opener}):
            continue
        if (
            ADDITION.search(new_s)
            or HEDGED.search(new_s)
            or PAST_FRAME.search(new_s)
            or TEMPORARY.search(new_c)
            or negated(new_c, lang, frozenset(old_words))
        ):
            continue
        if leans(new_c, TAKEOVER_ANCHORS, FROM_ANCHORS, HANDOVER_MARGIN, stops, names | {holder, taker, opener}):
            return (holder,), (taker,), closeness
    return None
