"""What a line says beyond its own spelling, read by grammar: "Feb" says February, "Sat"
Saturday; "serviced" says service; and a name says what the owner's notes call it
("Our dog Mabel chewed the remote": "Mabel's jabs done 6 Jan" says "dog", so it can
answer "When did the dog have her jabs?").

The month and weekday names and the family's familiar names are closed classes; the
apposition patterns are English grammar (a possessive or article, a noun, then a name; a
name, then the noun in brackets or after a comma; a noun later "named" or "called"
something). No open class is listed.

Meaning (e5) was tried for words the line does not spell (doctor/GP, glasses/specs,
internet/wifi) and dropped: multilingual-e5-small puts siblings as near as synonyms,
whether as words (internet/wifi 0.94, electricity/gas 0.91, brother/sister 0.91) or as
phrases ("back tyres"/"rear tyres" 0.96, "rear brake pads"/"front brake pads" 0.97,
"blood type"/"blood test" 0.94), so counting those as said answered the neighbour's
question as often as the synonym's.
"""

from __future__ import annotations

import re

from ... import textutil
from ..base import AnswerContext

_MONTHS = "january february march april may june july august september october november december".split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
# The short forms in use: the first three letters of each (four for "sept", "tues",
# "thur", "thurs", "weds"), the way diaries and notes write them.
_SHORT = {name[:3]: name for name in _MONTHS + _WEEKDAYS} | {
    "sept": "september",
    "tues": "tuesday",
    "weds": "wednesday",
    "thur": "thursday",
    "thurs": "thursday",
}
# "may" is its own full form; "sun" is mostly the sun. (The stems are what is mapped:
# "thurs" and "weds" arrive as "thur" and "wed".)
_SHORT.pop("may", None)
_SHORT.pop("sun", None)

# The family's familiar names are a closed class: "Dad moved to Ashgrove House" answers
# "Where is my father staying?". (Not "pa", "ma" or "nan", which are mostly other words.
# Not "kids" for "children": on LoCoMo dev it let "How did Caroline's children handle the
# accident?" be answered from Melanie's kids, whose_thing.py reading "child" as Caroline's
# too.)
_FAMILY = {
    **dict.fromkeys(("dad", "daddy", "papa"), "father"),
    **dict.fromkeys(("mum", "mom", "mummy", "mommy", "mama"), "mother"),
    **dict.fromkeys(("grandma", "granny", "gran"), "grandmother"),
    **dict.fromkeys(("grandpa", "grandad", "granddad", "gramp"), "grandfather"),
    "bro": "brother",
    "sis": "sister",
    "hubby": "husband",
}

_KIN = frozenset(_FAMILY.values())

# An English verb's irregular past is its present in another spelling: "Who led Atlas?" is
# answered by "Dave is project lead", "What did I pay for the boiler?" by "paid £220". A
# closed class of the grammar; forms that are mostly other words are left out ("saw",
# "left", "found", "felt", "fell", "read", "lost", "rose").
_PAST_OF = {
    "went": "go", "did": "do", "got": "get", "made": "make", "took": "take", "came": "come",
    "gave": "give", "met": "meet", "ran": "run", "ate": "eat", "drank": "drink", "bought": "buy",
    "sold": "sell", "won": "win", "wrote": "write", "spent": "spend", "paid": "pay", "told": "tell",
    "thought": "think", "brought": "bring", "caught": "catch", "taught": "teach", "fought": "fight",
    "flew": "fly", "drove": "drive", "rode": "ride", "swam": "swim", "sang": "sing", "began": "begin",
    "kept": "keep", "slept": "sleep", "heard": "hear", "held": "hold", "built": "build", "sent": "send",
    "sat": "sit", "stood": "stand", "broke": "break", "chose": "choose", "spoke": "speak", "stole": "steal",
    "woke": "wake", "wore": "wear", "threw": "throw", "grew": "grow", "knew": "know", "drew": "draw",
    "lent": "lend", "led": "lead", "fed": "feed", "meant": "mean", "rang": "ring", "shook": "shake",
    "forgot": "forget", "hid": "hide", "blew": "blow",
}  # fmt: skip
# Read (see canonical) when True; measured by the replay (scripts/eval_answers_replay.py).
PAST_AS_PRESENT = True

_NAME = r"(?-i:[A-Z][a-z][\w'’-]*)"
_NOUN = r"(?-i:[a-z][a-z-]{2,})"
# "our dog Mabel", "my sister Hana", "our new puppy Bo": a possessive or an article, at
# most one word more, the noun, the name.
_BEFORE_NAME = re.compile(rf"\b(?:my|our|his|her|their|your|the|a|an)\s+(?:[a-z-]+\s+)?({_NOUN})\s+({_NAME})", re.I)
# "Hamish (the cat)", "Mabel, our spaniel,": the name, then the noun set apart.
_AFTER_NAME = re.compile(rf"({_NAME})(?:'s)?\s*(?:\(|,)\s*(?:the|my|our|his|her|their)\s+(?:[a-z-]+\s+)?({_NOUN})\s*[),.;]", re.I)
# "Got a rabbit for the kids, they've named him Pip", "our new puppy, we named him Bo":
# the naming verb gives the name of the thing the clause brought in last by an indefinite
# article or a possessive (_named_later).
_NAMING = re.compile(rf"\b(?:named|called)\s+(?:(?:him|her|it|them)\s+)?({_NAME})", re.I)
_OPENER = re.compile(r"\b(?:a|an|my|our)\s+", re.I)
_RUN = re.compile(r"[a-z][a-z-]*", re.I)


def canonical(stem: str) -> str:
    """One spelling for a stem (textutil.stem's) that grammar says is the same word: a
    month's or weekday's short form is its full name, a familiar name of family its plain
    one ("dad": father); a final "e" is dropped, as the stem of its inflected forms drops
    it ("service" as "serviced": servic)."""
    stem = _FAMILY.get(stem) or _SHORT.get(stem, stem)
    if PAST_AS_PRESENT and stem in _PAST_OF:
        return textutil.stem(_PAST_OF[stem])
    if stem in _MONTHS or stem in _WEEKDAYS:
        return stem
    return stem[:-1] if len(stem) > 4 and stem.endswith("e") else stem


def kin(word: str) -> str | None:
    """The plain name of family a word (lower case) says, familiar or plain ("mummy",
    "mum" and "mother" all say mother), else None."""
    word = word.lower()
    return _FAMILY.get(word) or (word if word in _KIN else None)


def calendar(word: str) -> bool:
    """Whether a word (lower case) names a month or a weekday, in full or short."""
    return canonical(textutil.stem(word)) in _MONTHS or canonical(textutil.stem(word)) in _WEEKDAYS


# Month names that are also common words ("may", "march", "mar"): a month only when
# written with a capital.
_MONTH_ALSO_A_WORD = frozenset({"may", "march", "mar"})


def months_named(text: str) -> frozenset[str]:
    """The months a text names, in full or short ("Sept book club", "23rd Jan"), each in
    its full name."""
    out = set()
    for word in re.findall(r"[A-Za-z]+", text):
        low = word.lower()
        month = _SHORT.get(low, low)
        if month in _MONTHS and (word[:1].isupper() or low not in _MONTH_ALSO_A_WORD):
            out.add(month)
    return frozenset(out)


def spelled(stems) -> frozenset[str]:
    """The stems with their canonical spellings added."""
    return frozenset(stems) | {canonical(s) for s in stems}


# Suffixes that make a noun of a noun and keep its thing: "membership" says "member",
# "partnership" "partner", "neighbourhood" "neighbour". A closed class of English.
_SAME_THING_SUFFIXES = ("ship", "hood")


def says(word: str, said: frozenset[str]) -> bool:
    """Whether a text whose stems (as said() reads them) are `said` says `word`, in its own
    spelling or as the noun it is made from or makes ("a member of" / "Got a membership")."""
    stems = spelled(textutil.terms(word))
    if stems & said:
        return True
    return any(
        (other.startswith(stem) and other[len(stem) :] in _SAME_THING_SUFFIXES)
        or (stem.startswith(other) and stem[len(other) :] in _SAME_THING_SUFFIXES)
        for stem in stems
        for other in said
    )


def names_called(context: AnswerContext) -> dict[str, frozenset[str]]:
    """For each name the recalled notes put a noun beside (module docstring), lower case,
    the canonical stems of those nouns: {"mabel": {"dog"}}."""
    out: dict[str, set[str]] = {}
    for m in context.memories:
        text = m.text or m.summary or ""
        pairs = [m.groups() for m in _BEFORE_NAME.finditer(text)]
        pairs += [(noun, name) for name, noun in (m.groups() for m in _AFTER_NAME.finditer(text))]
        pairs += _named_later(text)
        for noun, name in pairs:
            noun = noun.lower()
            if noun in textutil.STOPWORDS or name.lower() in textutil.STOPWORDS:
                continue
            out.setdefault(name.lower().removesuffix("'s").removesuffix("’s"), set()).add(canonical(textutil.stem(noun)))
    return {name: frozenset(nouns) for name, nouns in out.items()}


def _named_later(text: str) -> list[tuple[str, str]]:
    """(noun, name) for each naming verb: the noun ends the phrase the last opener of its
    clause starts ("a guinea pig at the weekend and named her Clover": pig)."""
    out = []
    for match in _NAMING.finditer(text):
        clause = re.split(r"[.!?;]", text[: match.start()])[-1]
        openers = list(_OPENER.finditer(clause))
        if not openers:
            continue
        words = _RUN.findall(clause[openers[-1].end() :])
        while words and words[0].lower() in textutil.STOPWORDS:
            words.pop(0)  # "our new puppy"
        run = []
        for w in words[:3]:
            if w.lower() in textutil.STOPWORDS:
                break
            run.append(w)
        if run:
            out.append((run[-1], match.group(1)))
    return out


def said(stems, words, called: dict[str, frozenset[str]]) -> frozenset[str]:
    """A line's stems as they are read: with their canonical spellings and the nouns the
    names it says stand for (called: names_called; words: its plain words, lower case)."""
    out = set(spelled(stems))
    for w in words:
        out |= called.get(w, frozenset())
    return frozenset(out)


_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|\d[\w-]*|[^\w\s]")


def heads(text: str) -> frozenset[str]:
    """The canonical stems of the words a text ends a noun run with: a content word followed
    by the end, a stop, a digit or a word of a closed class ("Poppy's booster done 6 May":
    booster; "Blood test results back": results, not blood). Such a word is the thing
    itself, not what tells one of its kind from another."""
    tokens = [t.lower().removesuffix("'s").removesuffix("’s") for t in _TOKEN.findall(text)]
    out = set()
    for word, after in zip(tokens, [*tokens[1:], "."], strict=True):
        if not word[:1].isalpha() or word in textutil.STOPWORDS:
            continue
        if not after[:1].isalpha() or after in textutil.STOPWORDS:
            out.add(canonical(textutil.stem(word)))
    return frozenset(out)
