"""Closed classes of grammar, per language: who a sentence is about.

A pronoun or a possessive is read in the note's own language: Spanish "He cambiado"
is "I have changed", not English "he"; Italian "il mio numero" is "my number", not
French "il"; Spanish "Nos mudamos" is "we moved", not French "nos" ("our"). When the
language is not known (a note too short to name it), every language's class applies,
as before. These are the grammars' own closed classes (pronouns, possessives, the
endings of the first person), not phrasings of facts.
"""

from __future__ import annotations

import functools
import re

# Subject pronouns of the third person: the sentence is about someone else.
THIRD_PERSON = {
    "en": "he|she|they|he's|she's|they're",
    "de": "er|sie",
    "fr": "il|elle|ils|elles",
    "es": "él|ella|ellos|ellas",
    "pt": "ele|ela|eles|elas",
    "it": "lui|lei|loro|egli|ella",
}
# First-person possessives ("my", "our"), with the article Romance languages put before
# them ("il mio", "o meu") allowed by the pattern that uses them.
MY = {
    "en": "my|our",
    "de": "mein|meine|meinem|meinen|meiner|unser|unsere|unserem|unseren|unserer",
    "es": "mi|mis|nuestro|nuestra|nuestros|nuestras",
    "fr": "mon|ma|mes|notre|nos",
    "pt": "meu|minha|meus|minhas|nosso|nossa|nossos|nossas",
    "it": "mio|mia|miei|mie|nostro|nostra|nostri|nostre",
}
# Possessives of the third person ("her dentist", "seine Chefin", "son médecin", "il suo
# capo"): the noun is someone else's. Portuguese "seu/sua" is also "your", so left out.
THEIR = {
    "en": "his|her|their",
    "de": "sein|seine|seinem|seinen|seiner|ihr|ihre|ihrem|ihren|ihrer",
    "es": "su|sus",
    "fr": "son|sa|ses|leur|leurs",
    "pt": "dele|dela",
    "it": "suo|sua|suoi|sue|loro",
}
# The adjective "new" in each: "my new manager" is still "my manager".
NEW = {
    "en": "new",
    "de": "neu|neue|neuer|neuen|neues",
    "es": "nuevo|nueva|nuevos|nuevas",
    "fr": "nouveau|nouvel|nouvelle|nouveaux",
    "pt": "novo|nova|novos|novas",
    "it": "nuovo|nuova|nuovi|nuove",
}
# "A place of my own", "mi propio coche": the writer's own, not someone the possessive names.
OWN = frozenset(
    "own propio propia propios propias propre propres eigen eigene eigenen eigener próprio própria proprio propria".split()
)
ARTICLES = {"es": "el|la|los|las", "fr": "le|la|les", "pt": "o|a|os|as", "it": "il|lo|la|i|gli|le"}
# A copula, then a name (an article or a title may come first): "is Dr Kowal", "es el
# Dr. Ruiz", "ist Frau Weber", "è Marco". The copulas of each language are a closed class.
NAMED_BY_COPULA = re.compile(
    r"\s+(?:is|are|was|'s|es|era|est|était|ist|war|è|era|é)\s+(?:now\s+|ahora\s+|jetzt\s+|maintenant\s+|ora\s+|agora\s+)?"
    r"(?:(?:el|la|le|il|lo|o|a|der|die)\s+)?(?:(?:dr|mr|mrs|ms|prof|herr|frau|sr|sra|dott|m|mme)\.?\s+)?(?-i:[A-Z])",
    re.I,
)
# Languages that drop the subject pronoun: the verb's ending says who.
PRO_DROP = {"es", "pt", "it"}
# First person endings: singular present -o, past -é/-ei/-í; plural -amos/-emos/-imos
# (es, pt), -iamo (it). A reflexive or object pronoun of the first person may come first
# ("me mudé", "nos mudamos", "mi sono", "ci siamo").
# "He" and "ho" are the first person of "haber" and "avere" ("He cambiado", "Ho cambiato").
# The strong preterites of the first person singular follow no ending ("Fui", "Tuve",
# "Fiz", "Ebbi"): the irregular paradigms of each grammar are a closed class.
IRREGULAR_FIRST_PERSON_PAST = {
    "es": frozenset(
        "fui tuve estuve hice puse pude dije vine quise supe traje anduve conduje deshice rehice mantuve obtuve propuse".split()
    ),
    "pt": frozenset("fui fiz tive estive pus pude disse vim quis soube trouxe dei refiz mantive obtive".split()),
    "it": frozenset(
        "fui ebbi feci presi misi dissi venni vidi volli seppi scelsi scrissi lessi vissi chiesi decisi rimasi "
        "persi spesi vinsi ruppi mossi".split()
    ),
}
_IRREGULAR = "|".join(sorted(set().union(*IRREGULAR_FIRST_PERSON_PAST.values()), key=len, reverse=True))
_FIRST_PERSON_VERB = rf"(?:(?:me|nos|mi|ci)\s+)?(?:he|ho|{_IRREGULAR}|[^\W\d_]{{2,}}(?:o|é|ei|í|amos|emos|imos|iamo))"
_LEAD = r"(?:(?:ahora|agora|ora|adesso|ya|já|hoy|hoje|oggi|desde\s+\w+|da\s+\w+|seit\s+\w+)\W+)?"
PRO_DROP_VERB = re.compile(rf"^\W*{_LEAD}{_FIRST_PERSON_VERB}\b", re.I)


def _known(lang: str) -> list[str]:
    return [lang] if lang in THIRD_PERSON else list(THIRD_PERSON)


def _alternation(table: dict[str, str], lang: str) -> str:
    return "|".join(table[code] for code in _known(lang) if code in table)


@functools.cache
def third_person_subject(lang: str) -> re.Pattern:
    """A sentence opening with a third-person pronoun of the language."""
    return re.compile(rf"^\W*(?:{_alternation(THIRD_PERSON, lang)})\b", re.I)


@functools.cache
def possessive_subject(lang: str) -> re.Pattern:
    """ "My brother ...", "il mio numero ...": group 1 is the noun the writer's possessive
    opens the sentence with."""
    articles = _alternation(ARTICLES, lang)
    lead = rf"(?:(?:{articles})\s+)?" if articles else ""
    return re.compile(
        rf"^\W*(?:(?:so|and|but|well|oh|btw|fyi|today|yesterday)\W+)*{lead}(?:{_alternation(MY, lang)})\s+"
        # "My own new physio": "own" and "new" say whose and since when, the noun follows.
        rf"(?:(?:{'|'.join(sorted(OWN))})\s+)?(?:(?:{_alternation(NEW, lang)})\s+)?([^\W\d_][\w-]*)",
        re.I,
    )


def possessives(lang: str, *, own: bool) -> str:
    """The possessive determiners of the first person (`own`) or of the third, of the
    language (of every known language when it is not known), as a regex alternation."""
    return _alternation(MY if own else THEIR, lang)


@functools.cache
def possessive_of(lang: str) -> re.Pattern:
    """ "the number of my mother", "el número de mi madre": group 1 is the possessor."""
    return re.compile(rf"\b(?:of|de|da|do|di|del|della|von|vom)\s+(?:{_alternation(MY, lang)})\s+([^\W\d_][\w-]*)", re.I)


# The auxiliaries and the copula in the third person singular of the pro-drop languages
# (a closed class of each): after a capitalised opener, that opener is the subject
# ("Davide ha cambiato lavoro", "Marta es la jefa", "Rui está em Braga").
THIRD_PERSON_AUX = {
    "es": "ha|es|está|era|estaba|fue|tiene",
    "pt": "é|está|tem|foi|era|estava|vai",
    "it": "ha|è|era|sta|aveva|fa",
}


def named_third_person_subject(sentence: str, lang: str) -> bool:
    """A sentence of a pro-drop language that opens with a capitalised word and a verb of
    the third person: someone named is its subject, not the writer."""
    if lang not in THIRD_PERSON_AUX:
        return False
    return bool(re.match(rf"^\W*(?-i:[A-ZÀ-Ý])[\w'’-]+\s+(?:{THIRD_PERSON_AUX[lang]})\b", sentence, re.I))


def pro_drop_first_person(sentence: str, lang: str) -> bool:
    """A sentence of a pro-drop language that opens with a first-person verb ("Vivo en
    Sevilla", "Nos mudamos a Valencia", "Ci siamo trasferiti")."""
    return lang in PRO_DROP and bool(PRO_DROP_VERB.search(sentence))
