"""A note read into statements and words, and when two words are one.

A long sentence is compared clause by clause, a semicolon or a dash ends a statement as
a full stop does, and a word matches its other forms, its typos and its chat
abbreviations: the same slot is often said in other words.
"""

from __future__ import annotations

import difflib
import re

import numpy as np

from .... import textutil
from .. import similarity

_TOKEN = re.compile(r"\d[\d,.:/-]*\d|[\w@.'’+-]+")


# Groups of digits written apart are one number ("06 12 34 56 78", "0171 2345678"), not
# five values: a phone number's groups, a card's, an account's.
DIGIT_GROUPS = re.compile(r"(?<![\w.,:/])\+?\d{2,}(?: \d{2,})+(?![\w:/])")


def joined_numbers(text: str) -> str:
    return DIGIT_GROUPS.sub(lambda m: m.group(0).replace(" ", ""), text)


def tokens_of(sentence: str) -> list[str]:
    return [t.strip(".,:;'’-") for t in _TOKEN.findall(joined_numbers(sentence)) if t.strip(".,:;'’-")]


def words_of(text: str) -> set[str]:
    return {t.lower() for t in tokens_of(text)}


def is_stopword(word: str, stops: frozenset[str]) -> bool:
    """A stopword, or an elision of stopwords ("c'est", "j'ai", "dell'")."""
    if word in stops:
        return True
    parts = [p for p in re.split(r"['’]", word) if p]
    return len(parts) > 1 and all(p in stops for p in parts)


def content_words(sentence: str, stops: frozenset[str]) -> list[str]:
    return [t.lower() for t in tokens_of(sentence) if not is_stopword(t.lower(), stops) and len(t) > 2 and not t[:1].isdigit()]


# The possessive ending: "Callum's" names Callum ("at Callum's" is his place, not
# another value beside "Lent Callum my drill").
POSSESSIVE = re.compile(r"['’]s?$")
# What follows an "'s" that is "is" or "has", not a possessive: a number, or a word of a
# closed class (participles of "be", "have" and "get", adverbs, articles): "the
# amlodipine's been upped", "number's 07700 900877 now", "Dan's been made shift manager".
IS_OR_HAS_NEXT = (
    r"(?:\d|(?:been|got|gone|had|not|just|now|still|never|always|also|already|finally|"
    r"being|going|getting|back|off|a|an|the|so|very|really|too)\b)"
)


def without_possessive(word: str) -> str:
    bare = POSSESSIVE.sub("", word)
    return bare if len(bare) > 1 else word


def mentions(value: str, text_words: set[str]) -> bool:
    if value in text_words:
        return True
    value = without_possessive(value)
    if any(without_possessive(w) == value for w in text_words):
        return True
    if any(c.isdigit() for c in value):
        return False
    stem = textutil.stem(value)
    return any(textutil.stem(w) == stem for w in text_words)


# (Not "mon", "wed", "sat" and "sun", words of their own in lower case.)
_SHORT_DAYS = {k: v for k, v in textutil.WEEKDAY_SHORT.items() if k not in ("mon", "wed", "sat", "sun")}


def similar_word(word: str, words: set[str]) -> bool:
    """The word, another form of it, or a typo of it ("favorit" for "favourite"); a weekday
    as people shorten it ("thurs") is the weekday."""
    word = _SHORT_DAYS.get(word, word)
    stem = _root(word)
    for other in words:
        if other == word or _root(other) == stem or other.rstrip("s") == word.rstrip("s"):
            return True
        if len(word) > 4 and difflib.SequenceMatcher(None, word, other).ratio() >= 0.8:
            return True
        if _inflected(word, other):
            return True
    return False


# Gender and number in Romance languages change a noun's last vowel ("jefe" / "jefa",
# "médico" / "médica", "amigo" / "amiga"): one word.
_FINAL_VOWELS = frozenset("aeo")


def _inflected(word: str, other: str) -> bool:
    return (
        len(word) >= 4
        and len(word) == len(other)
        and word[:-1] == other[:-1]
        and word[-1] in _FINAL_VOWELS
        and other[-1] in _FINAL_VOWELS
    )


def _root(word: str) -> str:
    # The stemmer keeps the "e" of "vape" and "smoke" but not of "vaping" and "smoking".
    stem = textutil.stem(word)
    return stem[:-1] if len(stem) > 3 and stem.endswith("e") else stem


def abbreviates(word: str, words: set[str]) -> bool:
    """A chat abbreviation of a word the other note spells out ("fav" / "favourite")."""
    return len(word) >= 3 and any(len(w) >= len(word) + 3 and w.startswith(word) for w in words)


def consonants_of(short: str, word: str) -> bool:
    """`short` writes `word` by its consonants ("pw" / "password", "mgr" / "manager", "appt" /
    "appointment"): no vowel past its first letter, that letter the word's, each letter in
    the word in order, and the word much longer."""
    if len(short) < 2 or not short.isalpha() or short[0] != word[:1] or len(word) < len(short) + 3:
        return False
    if any(c in "aeiouy" for c in short[1:]):
        return False
    rest = iter(word[1:])
    return all(c in rest for c in short[1:])


# Statements compared per note: every one is a sentence the embedding model reads, twice.
MAX_SENTENCES = 12
# A semicolon or a dash between words: two statements, each with its own values.
HARD_BREAK = re.compile(r"\s*;\s*|\s+[-–—]\s+")
# Where a long sentence's clauses part: punctuation and the coordinating conjunctions.
# (Not the colon of a clock time: "10:00".)
CLAUSE_BREAK = re.compile(r"\s*;\s*|\s*:(?!\d)\s*|,?\s+(?:and|but|so)\s+|,\s+")
# "Home phone:": a label's words name the kind of the value that follows, not a value.
LABEL = re.compile(r"^\W*[\w-]+(?:\s+[\w-]+)?\s*:")


# The subject pronouns of English, with their contracted verbs (a closed class).
_SUBJECT_PRONOUN = re.compile(r"(?:i|he|she|we|they|it)(?:['’](?:s|m|re|ve|d|ll))?", re.I)
_PLAIN_WORD = re.compile(r"[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*")


def units_of(text: str) -> list[tuple[str, str]]:
    """(clause, its sentence) pairs: a long sentence's clauses are compared one by one. A
    semicolon or a dash between words ends a statement as a full stop does ("Amara now owns
    the migration; Kenji moved to search" is two facts, each with its own values)."""
    out = []
    for sentence in [s for s in textutil.sentences(text) if s.strip()] or [text]:
        pieces: list[str] = []
        for piece in [p.strip() for p in HARD_BREAK.split(sentence)]:
            # A piece of values alone ("... put the rent up - £1,240 from May") says the
            # value of the statement before it, not a statement of its own; an address
            # ("danny.r.82@hotmail.co.uk") is a value, not a word.
            # A piece opening with a pronoun ("he's with Dr Kowalski at ...") is a statement.
            words = tokens_of(piece)
            said = any(len(t) > 4 and t[:1].islower() and _PLAIN_WORD.fullmatch(t) for t in words)
            if pieces and not said and not (words and _SUBJECT_PRONOUN.fullmatch(words[0])):
                pieces[-1] = f"{pieces[-1]} {piece}"
            else:
                pieces.append(piece)
        for piece in pieces:
            if len(piece.split()) < 2:
                continue
            parts = [p.strip() for p in CLAUSE_BREAK.split(piece)] if len(piece.split()) > 8 else [piece]
            kept: list[str] = []
            for part in parts:
                if len(part.split()) >= 2:
                    kept.append(part)
                elif kept and any(c.isdigit() for c in part):
                    # A number alone between commas ("Sentry Team plan, $26/mo, on Marta's
                    # card") is the value of the clause before it.
                    kept[-1] = f"{kept[-1]}, {part}"
            out.extend((p, piece) for p in kept)
    return out[:MAX_SENTENCES] or [(text, text)]


def closest_pair(pairs: list[tuple[str, str]], read: dict[str, str] | None = None) -> tuple[float, str, str] | None:
    """Of (older clause, newer clause) pairs, the closest by meaning as written, with its
    cosine; None without an embedding layer. With `read` (another text to read a clause
    by), each pair scores the lower of its two readings."""
    read = read or {}
    texts = list(dict.fromkeys([c for pair in pairs for c in pair] + list(read.values())))
    vectors = similarity.meaning_vectors(texts)
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    index = {t: i for i, t in enumerate(texts)}

    def cos(a: str, b: str) -> float:
        return float(vectors[index[a]] @ vectors[index[b]])

    return max((min(cos(a, b), cos(read.get(a, a), read.get(b, b))), a, b) for a, b in pairs)


# A message quoted from a named sender ("Text from Gemma Pryce: '... I'll be your assistant
# from Thursday'"): inside the quotation the first person is the sender and the second
# the writer. The nouns of a message and the quotation marks are closed classes.
_QUOTED_MESSAGE = re.compile(
    r"\b(?:text|texts|email|e-mail|message|msg|letter|note|voicemail|whatsapp|sms|dm)\s+from\s+(?:an?\s+)?"
    r"((?-i:[A-Z][\w'’-]+)(?:\s+(?-i:[A-Z][\w'’-]+)){0,2})[^:'\"‘“]{0,40}:\s*['\"‘“](.+?)(?:['\"’”](?=\s|$)|$)",
    re.I,
)
_FIRST_PERSON_IN_QUOTE = (
    (re.compile(r"\bI['’]ll\b"), "{name} will"),
    (re.compile(r"\bI['’]m\b"), "{name} is"),
    (re.compile(r"\bI['’]ve\b"), "{name} has"),
    (re.compile(r"\bI\b"), "{name}"),
    (re.compile(r"\bme\b", re.I), "{name}"),
    (re.compile(r"\bmy\b", re.I), "{name}'s"),
    (re.compile(r"\byour\b", re.I), "my"),
)


def speakers_resolved(text: str) -> str:
    """The text with each quoted message's first person read as its sender and its second
    person as the writer: "Text from Gemma Pryce: 'Rob's handed me his folder, I'll be your
    assistant from Thursday'" reads "Rob's handed Gemma Pryce his folder, Gemma Pryce will
    be my assistant from Thursday"."""

    def resolve(m: re.Match) -> str:
        name, quoted = m.group(1), m.group(2)
        for pattern, replacement in _FIRST_PERSON_IN_QUOTE:
            quoted = pattern.sub(replacement.format(name=name), quoted)
        return m.group(0).replace(m.group(2), quoted, 1)

    return _QUOTED_MESSAGE.sub(resolve, text)
