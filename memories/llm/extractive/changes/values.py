"""The values a statement gives: names, numbers, codes and addresses, and their kinds.

A change is "the same slot, another value", so what counts as a value decides most
of it: a capitalised word past the sentence's first, a number, a code, an address;
a number inside a name ("Tesla Model 3") is part of the name. A value is a quantity
(a date, an amount, a weekday) or a word (a place, a name, a thing): one fact's two
values are of one kind. Masking the values ("I live in X") lets the embedding model
read the slot alone.
"""

from __future__ import annotations

import re

from .... import textutil
from .. import entities
from .statements import HARD_BREAK, LABEL, joined_numbers, tokens_of, without_possessive

NUMBER_WORDS = frozenset(w for w in textutil.NUMBER_WORDS if len(w) > 2)


def values_in(sentence: str, stops: frozenset[str], names: frozenset[str] = frozenset()) -> list[str]:
    """What a sentence gives as a value: names (capitalised past a sentence's first word,
    or written so elsewhere in the two notes: `names`), numbers, codes and addresses."""
    out = []
    for i, token in enumerate(tokens_of(sentence)):
        low = token.lower()
        # An address has its "@" inside it; a lone "@" is a note's "at" ("day 1 @ solinca").
        if any(c.isdigit() for c in token) or re.search(r"\w@\w", token) or low in NUMBER_WORDS:
            out.append(low)
        elif token[:1].isupper() and low not in stops and len(token) > 1 and (i > 0 or low in names):
            out.append(without_possessive(low))
    return out


def names_in(text: str) -> frozenset[str]:
    """Words the text capitalises inside a sentence (not as its first word)."""
    out = set()
    for sentence in textutil.sentences(text) or [text]:
        out.update(t.lower() for t in tokens_of(sentence)[1:] if t[:1].isupper())
    return frozenset(out)


def a_word(opener: str) -> bool:
    """An opening word that is a word, not a name: one the model's vocabulary mostly writes
    in lower case, or an English verb's ending ("Joined the gym" / "Cancelled the
    membership": a note that drops its subject, no holder)."""
    return entities.written_lower_case(opener) or entities.ends_as_a_word(opener)


def parallel_openers(old_text: str, new_text: str) -> frozenset[str]:
    """Capitalised words that open statements of the two notes in the same frame ("Yusuf
    runs the demo" / "Marta runs the demo"): in the place of a value, so names, though a
    sentence's first word is otherwise not taken for one."""

    def openers(text):
        out = {}
        for sentence in textutil.sentences(text) or [text]:
            for piece in HARD_BREAK.split(sentence):
                tokens = tokens_of(piece)
                # Not a label's words ("Home phone: ..." / "Office phone: ..."): two kinds.
                if len(tokens) > 1 and tokens[0][:1].isupper() and not LABEL.match(piece) and not a_word(tokens[0]):
                    out.setdefault(tokens[1].lower(), set()).add(tokens[0].lower())
        return out

    old, new = openers(old_text), openers(new_text)
    out = set()
    for verb in old.keys() & new.keys():
        if old[verb] != new[verb]:
            out |= old[verb] | new[verb]
    return frozenset(out)


def part_of_another_name(value: str, text: str, other_words: set[str]) -> bool:
    """The value is a word of a longer name the text gives, whose other words the other
    note does not have ("Street" in "the Fleet Street deli" after "Baker Street")."""
    tokens = tokens_of(text)
    for i, token in enumerate(tokens):
        if token.lower() != value:
            continue
        around = [tokens[j] for j in (i - 1, i + 1) if 0 < j < len(tokens)]
        # (a capitalised stopword opens a sentence: "The Jazz went ..." names the Jazz)
        if any(t[:1].isupper() and t.lower() not in other_words and t.lower() not in textutil.STOPWORDS for t in around):
            return True
    return False


PLACEHOLDER = "X"


def mask_values(clause: str, stops: frozenset[str], names: frozenset[str]) -> str:
    """The clause with each value (a name, a number, a code) replaced by one placeholder."""
    out = joined_numbers(clause)
    for value in sorted(set(values_in(clause, stops, names)), key=len, reverse=True):
        out = re.sub(rf"(?i)(?<![\w@.]){re.escape(value)}(?![\w@])", PLACEHOLDER, out)
    # "Honda Civic" is one value: one placeholder.
    return re.sub(rf"{PLACEHOLDER}(?:[\s,.]+{PLACEHOLDER})+", PLACEHOLDER, out)


TIME_WORDS = frozenset(w.lower() for w in (*textutil.MONTH_NAMES, *textutil.WEEKDAYS))


def kinds_of(values: list[str]) -> set[str]:
    """What kind of value each is: a quantity (a date, a time, a number, a month or a
    weekday: closed classes) or a word (a place, a name, a thing). One fact's two values
    are of one kind; a date in one note and a place in the other are two facts."""
    return {"quantity" if is_quantity(v) else "word" for v in values}


def is_quantity(value: str) -> bool:
    low = value.lower()
    # A digit with a word of four letters or more is a name ("1Password"), not a number
    # with its unit ("30mg", "10am", "350mb").
    digits = any(c.isdigit() for c in low) and not _LETTERS.search(low)
    return digits or low in NUMBER_WORDS or low in TIME_WORDS or low.rstrip("s") in TIME_WORDS


_LETTERS = re.compile(r"[^\W\d_]{4,}")


def numbers_in_names(text: str) -> set[str]:
    tokens = tokens_of(text)
    out = set()
    for i, token in enumerate(tokens):
        if any(c.isdigit() for c in token):
            around = [t for j, t in enumerate(tokens) if j in (i - 1, i + 1) and j > 0]
            if any(t[:1].isupper() and not is_quantity(t) for t in around):
                out.add(token.lower())
    return out


def one_kind(old: list[str], new: list[str], sentences: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The values of one kind on both sides. A number that is part of a name ("2012 Honda
    Civic", "Tesla Model 3") is a word. When one side holds two kinds and the other one,
    the other decides ("Seit April wohne ich in München" after "in Hamburg": the place);
    when both hold two kinds, they are two facts (a place's price)."""
    in_names = set().union(*(numbers_in_names(s) for s in sentences))

    def kinds(values):
        return {"word" if v in in_names or not is_quantity(v) else "quantity" for v in values}

    k_old, k_new = kinds(old), kinds(new)
    if len(k_old) > 1 and len(k_new) > 1:
        return [], []
    # Only a time or an amount beside the value may go ("since April", "from September");
    # a name beside a date is what the date is of ("the Falcon launch ... March 15").
    if len(k_old) > 1 and k_new == {"quantity"} or len(k_new) > 1 and k_old == {"quantity"}:
        return [], []
    if len(k_old) > 1:
        old = [v for v in old if kinds([v]) == k_new]
    elif len(k_new) > 1:
        new = [v for v in new if kinds([v]) == k_old]
    elif k_old != k_new:
        return [], []  # "launches in March" / "booked the venue in Berlin": a date and a place are two facts
    return old, new
