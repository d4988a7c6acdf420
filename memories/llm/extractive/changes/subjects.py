"""Whose fact a sentence states: the writer's, someone else's, or a thing someone owns.

"My brother joined Bosch" does not change where the writer works, "Dad's phone number"
is not "my phone number", and "Acme hired a new CFO" is Acme's news, not the writer's
job. Pronouns and possessives are read in the note's own language (grammar.py).
"""

from __future__ import annotations

import re

import numpy as np

from .... import textutil
from .. import entities, grammar, language, similarity
from .cues import (
    BEGAN_AT,
    CHANGE,
    IRREGULAR_PAST,
    ONE_SPAN_ONLY,
    PRICED,
    SAME_FORM_PAST,
    bound_to_a_span,
    for_now,
    starts_unbound,
)
from .statements import IS_OR_HAS_NEXT, abbreviates, similar_word, tokens_of, units_of, words_of
from .values import a_word, names_in

FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours"
    # The first-person pronouns and possessives of German, Spanish, French, Portuguese and
    # Italian (a closed class of each grammar).
    r"|ich|mich|mir|mein|meine|meinen|meinem|meiner|wir|uns|unser|unsere"
    r"|yo|mi|mis|nos|nosotros|nosotras|nuestro|nuestra|nuestros|nuestras"
    r"|je|j|moi|mon|ma|mes|nous|notre|nos"
    r"|eu|meu|minha|meus|minhas|nós|nosso|nossa|io|mio|mia|noi)\b",
    re.I,
)


def first_person(sentence: str, names: frozenset[str], lang: str = "") -> bool:
    """The writer's: a first-person word, or a sentence that opens with its verb ("Sold
    the Civic ...", "Moved to Lyon")."""
    if FIRST_PERSON.search(sentence):
        return True
    if grammar.pro_drop_first_person(sentence, lang or language.language_of(sentence)):
        return True
    if BEGAN_AT.match(sentence.lstrip(" \t\"'(*-")):
        return True  # "First day at Brightwater": a note opening with the writer's first span there
    first = (tokens_of(sentence) or [""])[0].lower()
    # "Working as a barista", "Got hired", "Moved to Lyon": a note opening with its verb.
    # A suffix needs a stem before it: "Need to buy printer ink" opens with no past tense
    # ("ne" + "ed"; read as the writer's state, a to-do note was replaced by every
    # "Switched ..." note of a notebook), nor does "Red wine ..." or "King's Cross ...".
    return first not in names and (
        first in IRREGULAR_PAST
        or first in SAME_FORM_PAST
        or (first.endswith("ed") and len(first) >= 5)
        or (first.endswith("ing") and len(first) >= 5)
    )


def someone_else(sentence: str, other_text: str, lang: str = "") -> bool:
    """The sentence is about someone the other note is not about."""
    if grammar.third_person_subject(lang).search(sentence) and not _names_whom_it_is_about(sentence, other_text):
        return True
    other = words_of(other_text)
    subject = grammar.possessive_subject(lang).search(sentence)
    if subject and _names_a_role(sentence, subject, other_text, lang):
        subject = None
    # "My work email is ..." / "my email is now ...": the possessive's noun phrase, any of
    # its words (the head noun is "email", not "work").
    # A colon after the phrase is a note's copula ("my mobile number: 07700 ...").
    phrase = _phrase(sentence, subject.start(1)) if subject else []
    split = sentence[subject.start(1) :].split(maxsplit=len(phrase)) if phrase else []
    after = split[len(phrase) :]
    stated = (after and _COPULA.match(after[0])) or (len(split) >= len(phrase) > 0 and split[len(phrase) - 1].endswith(":"))
    if stated and any(similar_word(w, other) for w in phrase[1:]):
        subject = None
    # "Mi hija Sofía va al ..." / "Primer día de Sofía ...": the name in apposition is the
    # one the other note names, so the same person, whatever noun it is named by there.
    if subject and _named_in_apposition(sentence, subject.end(1), other):
        subject = None
    return any(
        not similar_word(m.group(1).lower(), other)
        and not abbreviates(m.group(1).lower(), other)
        and m.group(1).lower() not in grammar.OWN
        for m in (subject, *grammar.possessive_of(lang).finditer(sentence))
        if m
    )


def _names_whom_it_is_about(sentence: str, other_text: str) -> bool:
    """The other note opens with a person, by name or by what the writer calls them ("Mum
    settled in at Rosewood", "Dad's GP: Dr Hennessy"), and the sentence names them too:
    its pronoun goes on about them or about those around them ("They've moved Mum
    downstairs to room 3", "she was at Parkside with Dad, he's been moved onto ...")."""
    m = re.match(r"^\W*((?-i:[A-ZÀ-Ý])[^\W\d_'’]+)", other_text)
    if not m or m.group(1).lower() in language.stopwords_for(other_text) | {"i"}:
        return False
    return bool(re.search(rf"\b{re.escape(m.group(1))}\b", sentence))


def _named_in_apposition(sentence: str, after: int, other: set[str]) -> bool:
    """The possessed noun is followed by a capitalised name ("my sister Jana", "mi hija
    Sofía") the other note has too."""
    m = re.match(r"\s+((?-i:[A-ZÀ-Ý])[^\W\d_]+)", sentence[after:])
    return bool(m) and m.group(1).lower() in other


def _names_a_role(sentence: str, subject: re.Match, other_text: str, lang: str) -> bool:
    """ "My GP is Dr Kowal", "my new trainer is Marisol": the possessive names who fills
    one of the writer's roles (a copula, then a name), so the writer's fact, not the
    possessed one's; unless the other note names another of the writer's roles the same
    way ("My dentist is Dr Brandt": two roles)."""
    # The role may be a noun phrase ("my line manager is Derek", "my primary care doctor
    # is ..."): up to two more words in lower case before the copula.
    rest = sentence[subject.end() :]
    heads = [rest]
    for _ in range(2):
        m = re.match(r"\s+[a-zà-ÿ][\w-]*", heads[-1])
        if not m:
            break
        heads.append(heads[-1][m.end() :])
    if not any(grammar.NAMED_BY_COPULA.match(h) for h in heads):
        return False
    other = grammar.possessive_subject(lang).search(other_text)
    return not (
        other
        and grammar.NAMED_BY_COPULA.match(other_text[other.end() :])
        and not similar_word(other.group(1).lower(), {subject.group(1).lower()})
    )


def other_subject(old_s: str, new_s: str, names: frozenset[str], old_text: str = "", new_text: str = "") -> bool:
    """One sentence is the writer's ("I work at Acme"), the other opens with a name
    ("Acme hired a new CFO") its note does not name: two subjects."""
    for a, b, a_text in ((old_s, new_s, old_text or old_s), (new_s, old_s, new_text or new_s)):
        first, second = ([*tokens_of(b), "", ""])[:2]
        # "Lavoro come infermiera ..." / "Davide ha cambiato lavoro": the verb's person says
        # whose each is where the language drops the pronoun.
        lang = language.language_of(f"{a} {b}")
        if (
            grammar.pro_drop_first_person(a, lang)
            and grammar.named_third_person_subject(b, lang)
            and not FIRST_PERSON.search(b)
            and not similar_word(first.lower(), words_of(a_text))
        ):
            return True
        # "Uncle Femi lives in Lagos", "Dr Okafor retired": a word of kin or a title before
        # the name; the name is who the sentence is about.
        # Not after a verb the note opens with ("Switched GPs - it's Dr. Lindqvist").
        # (a stopword is neither: "Zu O2 gewechselt" opens with a preposition, not a title)
        kin_or_title = (
            first.lower() not in names
            and first[:1].isupper()
            and first.lower() not in language.stopwords_for(b)
            and not first_person(b, names)
        )
        opener = second if kin_or_title and second.lower() in names else first
        if (
            first_person(a, names)
            # "New address from May: ..." after "Our address is ...": the opener modifies
            # the older sentence's own noun, it is no one.
            and not (second[:1].isalpha() and similar_word(second.lower(), words_of(a)) and second.lower() not in names)
            and not FIRST_PERSON.search(b)
            and (opener.lower() in names or (opener is first and _opens_with_someone(b, first)))
            and not similar_word(opener.lower(), words_of(a_text))
        ):
            return True
    return False


def _opens_with_someone(sentence: str, first: str) -> bool:
    """A sentence's first word, capitalised as any first word is, that reads as a person
    by meaning ("Tom got promoted ...", "Grandma moved into ..."): a name or a word of kin
    is the subject, where a verb or an adverb the note opens with is not ("Promo came
    thru", "Finally moved")."""
    low = first.lower()
    # A past form or an adverb by its ending is the verb's or the clause's ("Retired the
    # Hokas", "Finally moved"), whatever it reads near.
    verb_or_adverb = low.endswith(("ed", "ly")) or low in IRREGULAR_PAST
    return first[:1].isupper() and first.isalpha() and low not in textutil.STOPWORDS and not verb_or_adverb and person_noun(first)


# "Dad's phone", and the plural's "the kids' dentist"; not "Dan's been made ...".
_POSSESSIVE = re.compile(rf"\b([A-Za-z][\w-]*?(?:['’]s|s['’]))\s+(?!{IS_OR_HAS_NEXT})(\w+)", re.I)

# A preposition (a closed class), with a determiner, just before a possessive: the owned
# thing is where or with what ("at Ellie's house"), a value of the slot, not whose fact.
# A title of the closed class may come between ("at St Brigid's primary", "at Dr Kaur's").
_PLACE_BEFORE = re.compile(
    r"\b(?:at|in|on|to|into|from|near|by|with|over|inside|outside)(?:\s+(?:the|a|an))?(?:\s+(?:st|saint|dr|mr|mrs|ms|mt)\.?)?\s*$",
    re.I,
)

# Pronouns whose "'s" is "is" or "has" (a closed class), never a possessive.
CONTRACTED = frozenset("it he she that what there here who where how let this".split())
_OWNER_VERB = re.compile(rf"^\W*([A-Z][\w-]*)['’]s\s+(?!{IS_OR_HAS_NEXT})(\w+)\s+(\w+)")


# The copula of each grammar the notes are read in (a closed class).
_COPULA = re.compile(r"(?:is|are|was|were|ist|war|es|era|est|était|é|è|sono)\b", re.I)


def _phrase(sentence: str, start: int) -> list[str]:
    """The words of the noun phrase opening at `start` ("phone number" of "Mira's phone
    number is ..."): up to three, to the first stopword, value or punctuation."""
    out: list[str] = []
    for i, m in enumerate(re.finditer(r"[^\W\d_][\w-]*|\S", sentence[start:])):
        word = m.group(0).lower()
        if i == 0 and word in textutil.STOPWORDS and word.isalpha():
            continue  # "Mira's new number": a stopword adjective opens the phrase
        if len(out) == 3 or not word[:1].isalpha() or word in textutil.STOPWORDS:
            break
        out.append(word)
    return out


def other_owner(old_s: str, new_s: str) -> bool:
    """ "Dad's phone number" after "my phone number", "Jake's brother" after "Jake": a thing
    of someone the other sentence does not give it to."""
    for a, b in ((old_s, new_s), (new_s, old_s)):
        # "Tom's wife works at X" / "Tom works at X": the same verb, another doer.
        m = _OWNER_VERB.match(a)
        other = re.match(rf"^\W*{re.escape(m.group(1))}\s+(\w+)", b) if m else None
        if other and textutil.stem(other.group(1).lower()) == textutil.stem(m.group(3).lower()):
            return True
        b_low = b.lower()
        for m in _POSSESSIVE.finditer(a):
            marked, thing = m.group(1).lower().replace("’", "'"), m.group(2).lower()
            owner = marked.removesuffix("'s").removesuffix("'")
            if owner in CONTRACTED:
                continue  # "it's 7781 now" is "it is", no one's
            if _PLACE_BEFORE.search(a[: m.start()]):
                continue  # "meets at Ellie's house", "in the library's reading room": a value's owner
            # Possessed in the other sentence too ("Dan's been made ..." is Dan's own news).
            if theirs := re.search(rf"(?<!\w){re.escape(marked)}\s+(?!{IS_OR_HAS_NEXT})\w", b_low.replace("’", "'")):
                # The thing is the noun phrase after "'s": "Mira's phone number" and "Mira's
                # new number" share its noun. The other's phrase, not its every word: "Inês's
                # mum lives in Viseu" / "one of them lives in Inês's locker" share a verb.
                other_phrase = set(_phrase(b_low, theirs.end() - 1))
                if not any(similar_word(w, other_phrase) for w in _phrase(a, m.start(2))):
                    return True  # "Zoe's party" / "Zoe's birthday"
            elif owner not in b_low or re.search(rf"\b(?:my|our)\s+{re.escape(thing)}\b", b_low):
                return True  # "Dad's phone number" / "my phone number"; "Priya's manager" / "my manager"
            elif person_noun(thing):
                return True  # "Gemma's grandad has gone into a care home" / "Gemma lives in Stockport"
    return False


# What the writer's possessive names, by meaning: someone ("my sister", whose facts are
# hers) or one of the writer's own things ("my salary", "mon adresse mail", whose value is
# the writer's fact). Prototypes, not a list of nouns: the noun, in any language the
# embedding model reads, is placed by which side it is nearer, alone and after "my" (the
# small model reads "my flatmate" near "my flat" and "car" alone near "a person"; the two
# readings together keep them apart).
_PEOPLE = {
    "{}": ("a person", "someone", "a relative", "a friend"),
    "my {}": ("my sister", "my friend", "my husband", "my son", "my neighbour", "my colleague", "my roommate"),
}
_THINGS = {
    "{}": ("a thing", "an object", "an amount", "a place"),
    "my {}": ("my address", "my salary", "my phone", "my car", "my job", "my flat", "my bike"),
}
# The two margins summed (cosines, multilingual-e5-small): things "salary" +0.13, "adresse
# mail" +0.08, "numero" +0.08, "rent" +0.05, "email" +0.04; people at most +0.03
# ("flatmate"), "boss" 0.00, "mère" -0.01, "sister" -0.14.
THING_MARGIN = 0.05


def possessed_thing(sentence: str, lang: str = "") -> bool:
    """The sentence opens with the writer's possessive of a thing, not of a person ("My
    salary is 52k", "Mon adresse mail est ..."): the writer's own fact."""
    subject = grammar.possessive_subject(lang or language.language_of(sentence)).search(sentence)
    if not subject:
        return False
    margin = _thing_margin(subject.group(1).lower())
    return margin is not None and margin >= THING_MARGIN


# A noun whose margin is below this reads as a person: "grandad" -0.049, "dad" -0.053,
# "grandma" -0.040; the things and the words that are neither sit above ("promo" +0.020,
# "test" 0.000, "switched" -0.018).
PERSON_MARGIN = -0.025


UNKNOWN_PIECES = 4


def person_noun(noun: str) -> bool:
    """Whether the noun names someone ("grandad", "sister"), by the prototypes above. A
    word the vocabulary holds only in four pieces or more ("amlodipine", "lisinopril") is
    one the model barely knows, and its reading of it no evidence of a person."""
    if (entities.pieces_of(noun.lower()) or 0) >= UNKNOWN_PIECES:
        return False
    margin = _thing_margin(noun.lower())
    return margin is not None and margin < PERSON_MARGIN


def _thing_margin(noun: str) -> float | None:
    """How much nearer the noun is to things than to people, alone and after "my" (the two
    margins summed); None without the embedding model. Not cached here: the embedding layer
    keeps each sentence's vector by its model, and the model in use may change."""
    total = 0.0
    for template, people in _PEOPLE.items():
        things = _THINGS[template]
        vectors = similarity.meaning_vectors([*people, *things, template.format(noun)])
        if vectors is None:
            return None
        vectors = np.asarray(vectors, dtype=np.float32)
        n, row = len(people), vectors[-1]
        total += float((vectors[n:-1] @ row).max() - (vectors[:n] @ row).max())
    return total


def someone_elses_role(old_text: str, new_text: str, lang: str = "") -> bool:
    """The older note names a role of the writer's ("My dentist is Dr Farrow") and the
    newer one names that role only as someone else's ("Took Mum to her dentist, Dr
    Quayle", "Raj's manager, Doug"): another person's fact, whatever else matches."""
    stops = language.stopwords_for(f"{old_text} {new_text}")
    mine = re.compile(rf"\b(?:{grammar.possessives(lang, own=True)})\s+((?:[^\W\d_][\w-]*\s+)?[^\W\d_][\w-]*)", re.I)
    theirs = re.compile(grammar.possessives(lang, own=False), re.I)
    # The role is the head of the phrase, its last word before a stopword ("my line manager
    # is ...": the manager; "Marcus Reid's reporting line" names no manager of his).
    roles = {head for m in mine.finditer(old_text) if (head := _head(m.group(1).split(), stops))}
    for role in roles:
        said = [m for m in re.finditer(rf"\b{re.escape(role)}\b", new_text, re.I)]
        if not said:
            continue
        if all(_owned_by_another(new_text[: m.start()], theirs) for m in said):
            return True
    return False


def _head(words: list[str], stops: frozenset[str]) -> str:
    """The last lower-case word of a noun phrase before any stopword, else ""."""
    phrase = []
    for word in words:
        if word.lower() in stops or not word.islower():
            break
        phrase.append(word)
    return phrase[-1] if phrase else ""


def values_of_another(sentence: str, values: list[str], lang: str = "") -> bool:
    """A value stands in apposition to a noun the third person owns ("Helped Kofi move into
    his new place, 31 Market Street", "her new number: 07700 ..."): theirs, not the
    writer's, whatever other names the sentence holds."""
    theirs = re.compile(grammar.possessives(lang, own=False), re.I)
    low = sentence.lower()
    found = [at for v in values if (at := low.find(v.lower())) > 0]
    # In apposition: set off by a comma, a colon or a dash ("it's all in Vanguard now" is
    # no apposition to "it").
    return any(
        re.search(r"[,:(—–-]\s*$", sentence[:at]) and _owned_by_another(sentence[:at].rstrip(" ,:;(—–-"), theirs) for at in found
    )


def _owned_by_another(before: str, theirs: re.Pattern) -> bool:
    """The words before a noun end in a possessive of the third person or a name's ("her",
    "Raj's"), with up to two words between ("her new dentist")."""
    head = " ".join(before.split()[-3:])
    return bool(re.search(rf"(?:\b(?:{theirs.pattern})|[\w]['’]s|s['’])(?:\s+[^\W\d_][\w-]*){{0,2}}\s*$", head, re.I))


def writer_away_for_now(text: str) -> bool:
    """The writer tells where they are or what they do in the span they are in ("Working
    out of the Birmingham office this week", "Cette semaine je télétravaille depuis
    Annecy"): a stay for a while, not the new value of their slot. A thing's value of the
    span ("Netflix bill this month: $17.99") is not a stay. A statement bound to a span
    ("für drei Tage in Hamburg", "the week in Edinburgh", "on the work trip") is a stay
    whoever's it is and whenever it was."""
    lang = language.language_of(text)
    names = frozenset(w.lower() for w in re.findall(r"(?<=\s)(?-i:[A-Z])[\w-]+", text))
    # Bound to a span ("on the work trip", "for three days"), whoever's and whenever it
    # was, with no word of change: a stay, or a stand-in for a while. A price for a span
    # ("down to £29/month for 18 months") is the thing's value, no one's stay.
    if bound_to_a_span(text) and not CHANGE.search(text) and not PRICED.search(text):
        return True
    if ONE_SPAN_ONLY.search(text):
        return True  # "Christmas week only, collection is Saturday instead"
    return for_now(text) and first_person(text, names, lang) and not starts_unbound(textutil.sentences(text) or [text])


# The third person's pronouns and possessives, in English: a statement going on about
# its subject.
_THIRD_PERSON_EN = re.compile(r"\b(?:he|she|his|her|hers|him|they|their|them)\b", re.I)


def news_of_someone_new(old_text: str, new_text: str, lang: str = "") -> bool:
    """The older note states a fact of the writer's (in any of its statements: "British Gas
    man came to read the meter. We're on their fixed tariff"), and the newer one opens with
    a person the older never names, going on about them with no word of the writer's
    ("Joan next door has gone over to Octopus for her gas"): that person's news, not a
    change of the writer's fact. English only: the third person is read in English."""
    lang = lang or language.language_of(f"{old_text} {new_text}")
    if lang not in ("en", ""):
        return False
    names = names_in(old_text) | names_in(new_text)
    opening = next((sentence for _, sentence in units_of(new_text)), new_text)
    tokens = tokens_of(opening)
    if not tokens or first_person(opening, names, lang) or FIRST_PERSON.search(opening) or not _THIRD_PERSON_EN.search(opening):
        return False
    first = tokens[0]
    if not first[:1].isupper() or a_word(first) or first.lower() in words_of(old_text) or first.lower() in textutil.STOPWORDS:
        return False
    return any(first_person(sentence, names, lang) for _, sentence in units_of(old_text))
