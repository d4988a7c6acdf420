"""A role of the writer's named again, in passing, with another person in it ("Our dentist
is Dr Farrow" / "Had a filling done; Dr Osei, our dentist, was quick about it").

The newer note is about something else and has no change word; the evidence is the
grammar of a role and its holder: a possessive or a definite article, a noun phrase in
lower case, and a name beside it (in apposition, "X, our landlord" / "my manager X", after
a copula, or after "as"). The same role with another holder, later, replaces the older
holder when one of the two notes says the role has one holder: a definite article ("the
landlord, Ms Achebe"), a non-restrictive apposition set off by commas ("My manager, Helen
Park, ...": "my sister Eva", with no commas, picks one of several), a copula or "as". The
embedding model keeps out the roles several people fill at once (brothers, cousins,
colleagues), which grammar alone does not tell from a landlord.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .... import textutil
from .. import grammar, language, similarity
from .cues import CHANGE, HEDGED, PAST_FRAME, negated
from .statements import mentions, similar_word, units_of, words_of

_TITLE = r"(?:(?:dr|mr|mrs|ms|miss|prof|herr|frau|sr|sra|mme|dott|dottssa)\.?\s+)"
_NAME = rf"(?P<name>{_TITLE}?(?-i:[A-Z][\w'’-]+)(?:\s+(?-i:[A-Z][\w'’-]+)){{0,2}})"
# A role: one to three words in lower case (or an abbreviation: "GP"), the last its head.
_ROLE = r"(?P<role>(?:(?-i:[a-zà-ÿ][\w'’-]*|[A-Z]{2,4})\s+){0,2}(?-i:[a-zà-ÿ][\w-]*|[A-Z]{2,4}))"
_COPULA = r"(?:is|was|ist|war|es|era|est|était|è|é)"
_DEFINITE = {"en": "the", "de": "der|die|das|den|dem", "es": "el|la", "fr": "le|la", "it": "il|lo|la", "pt": "o|a"}

# Roles one person fills for the writer at a time, against those several people fill
# (masked of nothing: the role noun phrase as written). Calibrated on the dev roles and
# look-alikes (CHANGELOG, round 17): "my manager" +0.030, "my GP" +0.036, "the landlord"
# +0.072, "my hairdresser" -0.006; "my brother" -0.023, "a coworker" -0.032, "my
# classmate" -0.018, "our neighbour" -0.060.
ONE_HOLDER_ANCHORS = ("my landlord", "my boss", "my doctor")
MANY_HOLDER_ANCHORS = ("my sister", "my friend", "my colleague", "my neighbour")
ONE_HOLDER_MARGIN = -0.015


@dataclass(frozen=True)
class Role:
    words: str  # as written, with its determiner ("our dentist")
    head: str
    holder: str
    one_holder: bool  # the grammar says the role has one holder


def roles_in(statement: str, lang: str) -> list[Role]:
    """Each role of the writer's the statement names with its holder."""
    own = grammar.possessives(lang, own=True)
    articles = [_DEFINITE["en"], _DEFINITE[lang]] if lang in _DEFINITE else list(_DEFINITE.values())
    definite = "|".join(dict.fromkeys(a for group in articles for a in group.split("|")))
    determiner = rf"(?P<det>{own}|{definite})"
    patterns = (
        (rf"\b{determiner}\s+{_ROLE}\s*,\s*{_NAME}", True),  # "my manager, Helen Park"
        (rf"\b{_NAME}\s*,\s*{determiner}\s+{_ROLE}\b", True),  # "Dr Osei, our dentist"
        (rf"\b{_NAME}\s+as\s+{determiner}\s+{_ROLE}\b", True),  # "Dr Nkemelu as my GP"
        (rf"\b{determiner}\s+{_ROLE}\s+{_COPULA}\s+{_NAME}", True),  # "our dentist is Dr Farrow"
        (rf"\b{_NAME}\s+{_COPULA}\s+{determiner}\s+{_ROLE}\b", True),  # "Kemal is my team lead"
        # "my manager Tobias Lind"; with an article it is a title ("le docteur Martin").
        (rf"\b(?P<det>{own})\s+{_ROLE}\s+{_NAME}", False),
    )
    stops = language.stopwords_for(statement)
    fresh = {w for table in grammar.NEW.values() for w in table.split("|")}
    found = []
    for pattern, set_off in patterns:
        for m in re.finditer(pattern, statement, re.I):
            # "the new GP" is the GP: "new" says since when, not which role.
            words = [w for w in m.group("role").split() if w.lower() not in fresh]
            if not words or any(w.lower() in stops for w in words):
                continue
            head = words[-1].lower()
            definite_article = m.group("det").lower() not in own.lower().split("|")
            holder = re.sub(rf"^{_TITLE}", "", m.group("name"), flags=re.I)
            found.append(Role(f"{m.group('det')} {' '.join(words)}", head, holder, set_off or definite_article))
    return found


def new_holder(old_text: str, new_text: str):
    """(old holder, new holder, margin) when the newer note names one of the older note's
    roles of the writer's with another person in it; else None."""
    lang = language.language_of(f"{old_text} {new_text}")
    old_roles = [r for _, s in units_of(old_text) if not _not_held(s, lang, old_text) for r in roles_in(s, lang)]
    new_roles = [r for _, s in units_of(new_text) if not _not_held(s, lang, old_text) for r in roles_in(s, lang)]
    old_roles += [
        r for _, s in units_of(old_text) if not _not_held(s, lang, old_text) for r in roles_by_verb(s, new_roles, new_text)
    ]
    if not old_roles:
        return None
    pairs = [(o, n) for o, n in _held_again(old_roles, new_roles, old_text) if o.one_holder or n.one_holder]
    if not pairs:
        return None
    margin_of = _one_holder_margins(list(dict.fromkeys(r.words.lower() for pair in pairs for r in pair)))
    if margin_of is None:
        return None
    for old, new in pairs:
        margin = min(margin_of[old.words.lower()], margin_of[new.words.lower()])
        if margin >= ONE_HOLDER_MARGIN:
            return (old.holder.lower(),), (new.holder.lower(),), margin
    return None


def _held_again(old_roles: list, new_roles: list, old_text: str) -> list[tuple]:
    """The pairs of an older role and a newer one that name the same role of the same
    person ("my son's teacher" / "my daughter's teacher" do not) with a holder the older
    note does not name."""
    old_words = words_of(old_text)
    return [
        (o, n)
        for o in old_roles
        for n in new_roles
        if (o.head == n.head or similar_word(o.head, {n.head}))
        and _possessors(o.words) == _possessors(n.words)
        and not any(mentions(w, old_words) for w in words_of(n.holder))
    ]


def _one_holder_margins(phrases: list[str]) -> dict[str, float] | None:
    """How much nearer in meaning each role phrase is to a role of one holder than to one of
    several ("my landlord" against "my sister"); None without the embedding model."""
    vectors = similarity.meaning_vectors([*ONE_HOLDER_ANCHORS, *MANY_HOLDER_ANCHORS, *phrases])
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    n_one, n_many = len(ONE_HOLDER_ANCHORS), len(MANY_HOLDER_ANCHORS)
    rows = vectors[n_one + n_many :]
    margins = (rows @ vectors[:n_one].T).max(axis=1) - (rows @ vectors[n_one : n_one + n_many].T).max(axis=1)
    return dict(zip(phrases, margins.tolist(), strict=True))


def another_of_several(old_text: str, new_text: str) -> bool:
    """The newer note names, with another person in it, a role of the writer's that the
    older note names with its holder, and the role is one several people fill ("My
    brother, Tom, lives in Leeds" / "Lunch with my brother Sam"): another brother, not a
    change of the brother. A change word in the newer note leaves it to the judgement."""
    if CHANGE.search(new_text):
        return False
    lang = language.language_of(f"{old_text} {new_text}")
    old_roles = [r for _, s in units_of(old_text) for r in roles_in(s, lang)]
    new_roles = [r for _, s in units_of(new_text) for r in roles_in(s, lang)]
    pairs = _held_again(old_roles, new_roles, old_text)
    if not pairs:
        return False
    margin_of = _one_holder_margins(list(dict.fromkeys(r.words.lower() for pair in pairs for r in pair)))
    if margin_of is None:
        return False
    return any(max(margin_of[o.words.lower()], margin_of[n.words.lower()]) < ONE_HOLDER_MARGIN for o, n in pairs)


def _not_held(statement: str, lang: str, old_text: str) -> bool:
    """The statement names the role as thought of, as a time gone, or denied."""
    return bool(
        (HEDGED.search(statement) or PAST_FRAME.search(statement) or negated(statement, lang, frozenset(words_of(old_text))))
        and not CHANGE.search(statement)
    )


# "Marta coaches the kids' team": a name, then a verb in the third person (English "-s").
_DOES = re.compile(rf"^\W*{_NAME}\s+(?P<verb>(?-i:[a-z]{{3,}})s)\s+(?P<object>[^,.;!?]+)", re.I)


def roles_by_verb(statement: str, roles: list[Role], other_text: str) -> list[Role]:
    """A role the statement tells by its verb ("Marta coaches the kids' football team")
    when the other note names its agent noun ("the coach, Dev Kapoor": the verb's stem, or
    the stem and "-er"/"-or", a closed class of English morphology) and a word of what the
    verb is done to ("the kids"): the role of another note, with its holder then."""
    m = _DOES.match(statement)
    if not m:
        return []
    stem = textutil.stem(m.group("verb").lower())
    stops = language.stopwords_for(statement)
    done_to = [w for w in words_of(m.group("object")) if w not in stops and len(w) > 2]
    other_words = {re.sub(r"['’]s$", "", w) for w in words_of(other_text)}  # "the bakery's hours"
    if not any(mentions(w, other_words) for w in done_to):
        return []
    holder = re.sub(rf"^{_TITLE}", "", m.group("name"), flags=re.I)
    return [
        Role(role.words, role.head, holder, False) for role in roles if role.head in (stem, f"{stem}er", f"{stem}or", f"{stem}r")
    ]


def _possessors(role: str) -> tuple[str, ...]:
    """The words of the role that say whose it is ("son's" of "my son's teacher")."""
    return tuple(w.lower().rstrip("'’s") for w in role.split() if re.search(r"['’]s?$", w))
