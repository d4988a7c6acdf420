"""A move told by its noun ("Umzug nach Leipzig geschafft", "Mudanza a Bilbao completada",
"Déménagement à Grenoble terminé") after a note of where the writer lives.

The newer note has no verb of the move and no change word: a noun, a preposition of
direction (a closed class of each grammar) and a place. Whether the noun is a move of
home or a trip, a flight, a visit is read by meaning: the noun with its preposition, the
place masked ("Umzug nach X"), is nearer moving house than travelling. The older note
must say where the writer lives, by meaning too: its statement, place masked, nearer
living somewhere than working, staying or having been there.
"""

from __future__ import annotations

import re

import numpy as np

from .. import grammar, language, similarity
from .cues import HEDGED, PAST_FRAME, TEMPORARY, negated
from .statements import mentions, units_of, words_of
from .subjects import first_person, someone_else
from .values import mask_values, names_in, values_in

# Prepositions of direction before a place, a closed class of each grammar: "to", "nach",
# "in die", "a", "à", "au", "al", "para (o/a)", "pra".
_DIRECTION = r"(?:to|into|nach|in\s+die|in\s+den|a|à|au|al|para(?:\s+[oa])?|pra)"
_PLACE = r"(?-i:[A-ZÀ-Ý][\w'’-]+(?:\s+[A-ZÀ-Ý][\w'’-]+)*)"
# A noun, not a verb: it opens the statement ("Mudanza a Bilbao completada") or follows a
# determiner ("Der Umzug nach", "a move to", "notre déménagement à"): closed classes.
_DETERMINER = (
    r"(?:the|a|an|der|die|das|dem|den|des|ein|eine|einem|einen|el|la|los|las|le|les|l'|un|una|une|uno|il|lo|o|um|uma"
    rf"|{grammar.possessives('', own=True)})"
)
MOVE_NOUN = re.compile(
    rf"(?:^\W*|\b{_DETERMINER}\s+|\bl['’])(?P<noun>[^\W\d_][\w-]{{2,}})\s+(?P<prep>{_DIRECTION})\s+(?P<place>{_PLACE})", re.I
)

# A pronoun joined to its verb by a hyphen (Portuguese "mudei-me", "mudámo-nos"; French
# "installons-nous"): the word is a verb, not a noun. A closed class.
_CLITIC = re.compile(r"-(?:me|te|se|nos|vos|lhe|lhes|o|a|os|as|lo|la|los|las|nous|vous|moi|toi)$", re.I)

# What a move of home means, for the embedding model, against travelling somewhere: the
# noun with its preposition and the place masked. Calibrated on the dev notes and
# look-alikes written for it (CHANGELOG, round 17): "Umzug nach X" +0.012, "Déménagement
# à X" +0.016, "Mudanza a X" +0.003, "mudança para o X" +0.004; trips, flights, visits,
# business trips and excursions -0.004 to -0.037.
MOVE_ANCHORS = ("moving house to X.", "our move to X.", "relocation to X.", "we moved to X.")
TRAVEL_ANCHORS = (
    "a trip to X.",
    "a flight to X.",
    "a visit to X.",
    "a business trip to X.",
    "a holiday in X.",
    "the train to X.",
    "a meeting in X.",
    "a transfer to X.",
)
MOVE_MARGIN = 0.0
# Where one lives, against what else a place is to someone (work, a stay, a visit).
HOME_ANCHORS = ("I live in X.", "We live in X.", "My home is in X.")
AWAY_ANCHORS = (
    "I work in X.",
    "I am staying in X this week.",
    "I visited X.",
    "I was born in X.",
    "I like X.",
    "My doctor is X.",
    # An errand or an appointment at a place ("Booked the car in for its MOT at the garage
    # on X" +0.015 without these, -0.007 with them; the homes written in any language keep
    # their margins, +0.004 to +0.047).
    "I had an appointment at X.",
    "I went shopping at X.",
)
HOME_MARGIN = 0.0


def moved_by_noun(old_text: str, new_text: str):
    """(old places, new place, margin) when the newer note tells the writer's move of home
    by its noun and the older one says where the writer lives; else None."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    lang = language.language_of(f"{old_text} {new_text}")
    names = names_in(old_text) | names_in(new_text)
    moves = []
    for _, statement in units_of(new_text):
        if HEDGED.search(statement) or PAST_FRAME.search(statement) or TEMPORARY.search(statement):
            continue  # "Half considering a move to X", "Meine Schwester plant den Umzug"
        if negated(statement, lang, frozenset(words_of(old_text))):
            continue
        for m in MOVE_NOUN.finditer(statement):
            if m.group("noun").lower() in stops or _someone_before(statement[: m.start()], lang):
                continue
            if _CLITIC.search(m.group("noun")):
                continue  # "Mudei-me para o Porto": a verb with its pronoun, read by the verb rules
            if len(statement[: m.start()].split()) > 1:
                continue  # the noun is what another verb is about ("On a visité un appart à X")
            # Whose statement, with the move itself taken out ("Unser Umzug nach X" is the
            # writer's; "Mi amiga Carmen hizo la mudanza" is not).
            if someone_else(statement.replace(m.group(0), m.group("place")), old_text, lang):
                continue
            moves.append((statement, m.group("noun"), m.group("prep"), m.group("place")))
    if not moves:
        return None
    # Each place with the clause that names it: where the writer lives is read from that
    # clause ("Watched the rugby at X's, we lost by a single point": a visit, whatever the
    # rest of the sentence says), whose it is and when from the whole statement.
    homes = [(c, s, _places(c, stops, names)) for c, s in units_of(old_text)]
    homes = [
        (c, p)
        for c, s, p in homes
        if p
        and first_person(s, names, lang)
        and not someone_else(s, new_text, lang)
        and not PAST_FRAME.search(s)
        and not HEDGED.search(s)
    ]
    if not homes:
        return None
    new_words = words_of(new_text)
    phrases = [f"{noun} {prep} X." for _, noun, prep, _ in moves]
    old_masked = [mask_values(s, stops, names) for s, _ in homes]
    anchors = [*MOVE_ANCHORS, *TRAVEL_ANCHORS, *HOME_ANCHORS, *AWAY_ANCHORS]
    vectors = similarity.meaning_vectors([*anchors, *phrases, *old_masked])
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    bounds = np.cumsum([0, len(MOVE_ANCHORS), len(TRAVEL_ANCHORS), len(HOME_ANCHORS), len(AWAY_ANCHORS), len(phrases)])
    move, travel, home, away, said, lived = (vectors[a:b] for a, b in zip(bounds, [*bounds[1:], len(vectors)], strict=True))
    move_margins = (said @ move.T).max(axis=1) - (said @ travel.T).max(axis=1)
    home_margins = (lived @ home.T).max(axis=1) - (lived @ away.T).max(axis=1)
    for (_, _, _, place), margin in zip(moves, move_margins, strict=True):
        if margin < MOVE_MARGIN:
            continue
        for (_, places), lives in zip(homes, home_margins, strict=True):
            if lives < HOME_MARGIN:
                continue
            if any(mentions(p, words_of(place)) for p in places):
                continue  # the move is to the place the writer already lives
            if any(mentions(p, new_words) for p in places):
                continue  # "Umzug von Köln nach Bonn" names both: the pattern rules read it
            return tuple(places), (place.lower(),), float(margin)
    return None


def _places(statement: str, stops: frozenset[str], names: frozenset[str]) -> list[str]:
    """The names of the statement, as places it could say the writer lives in: written as
    names (a capital), so "donated two boxes" names no place."""
    return [
        v
        for v in values_in(statement, stops, names)
        if v[:1].isalpha() and _written_as_a_name(v, statement) and not _possessive(v, statement)
    ]


def _possessive(value: str, statement: str) -> bool:
    """The name is written as someone's ("at Callum's"): a person's place, not a town."""
    return bool(re.search(rf"(?i)\b{re.escape(value)}['’]s?(?!\w)", statement))


def _written_as_a_name(value: str, statement: str) -> bool:
    at = statement.lower().find(value.lower())
    return at >= 0 and statement[at : at + 1].isupper()


def _someone_before(before: str, lang: str) -> bool:
    """Someone is named before the move's noun ("Ayudé a mi hermana con la mudanza a X",
    "Helped Tom with the move to X"): the move may be theirs. A name inside the sentence
    (not its first word), or a first-person possessive with its noun ("mi hermana")."""
    tokens = before.split()
    if any(t[:1].isupper() for t in tokens[1:]):
        return True
    return bool(re.search(rf"\b(?:{grammar.possessives(lang, own=True)})\s+[^\W\d_]", before, re.I))
