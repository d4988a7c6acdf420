"""Whether a line that says the thing a question asks the name of gives that thing's name.

"What is the name of Ana's girlfriend?" is not answered by "Ana flew to Crete with her
girlfriend": the line says the girlfriend and holds a name, but the name is a place (a
preposition of place stands before it), and nothing names her. A line that says the thing
answers when it holds a name that is not a place ("Nativity at Isla's school — my niece was
a sheep": a possessor is someone), or a name bound to the thing by grammar: beside it ("the
restaurant Dishoom", "Mia, her girlfriend"), after a copula ("my girlfriend is Mia"), or
after a naming word ("we named her Luna"). A line that does not say the thing is not read
here: "a rescue greyhound called Pepper" answers "What is the name of Tom's dog?" without
saying "dog", and the other checks (answers._unsaid_things) decide whether it is about it.
Nor is a word inside a name the thing ("drinks at the Fat Cat" for "my cat's name").

Grammar only: the possessive and "name of" of the question, capitalisation, punctuation and
closed classes (determiners, copulas, naming words, prepositions of place); no open-class
word list.
"""

from __future__ import annotations

import re

from ... import textutil
from . import said_as

# Whether a line that says the thing asked the name of must give a name bound to it
# (answers._gives_kind).
BOUND_NAME = True

_DET = r"(?:the|a|an|my|our|his|her|their|your|its)"
# "What is my cat's name?", "What's the band's name?": the possessor is the thing named.
_POSSESSED_NAME = re.compile(r"\b([a-z][\w-]*)['’]s\s+(?:[a-z][\w-]*\s+)?(?:name|names|title)\b")
# "the name of Ana's girlfriend", "the name of the dog's vet", "the name of the restaurant we
# went to": the head of the phrase after "of" (the last of a possessive chain).
_NAME_OF = re.compile(
    rf"\b(?:name|names|title)\s+of\s+(?:{_DET}\s+)?(?:[\w-]+['’]s\s+)*([a-z][\w-]*)",
)
# A name: a capitalised word, or a quoted one.
_NAME = r"(?:[\"“'‘]?[A-Z][\w'’-]*)"
# After the thing: "girlfriend Mia", "girlfriend, Mia", "girlfriend (Mia)", "girlfriend is
# Mia", "girlfriend is called Mia", "girlfriend's name is Mia", "girlfriend: Mia".
_AFTER = re.compile(rf"^(?:['’]s\s+name)?\s*[,(:–-]?\s*(?:(?:is|was|'s|’s)\s+)?(?:(?:called|named|nicknamed)\s+)?{_NAME}")
# Before the thing: "Mia, her girlfriend", "Mia (my girlfriend)", "Mia the cat".
_BEFORE = re.compile(rf"{_NAME}(\s*[,(–-])?\s*(?:(?:{_DET}|[A-Z][\w-]*['’]s)\s+(?:[a-z][\w-]*\s+)?)?$")
# A naming word before a name anywhere in the line: "we named her Luna", "he's called Rex".
_NAMING = re.compile(rf"\b(?:called|named|nicknamed|name\s+is|name['’]s)\s+(?:(?:him|her|it|them)\s+)?{_NAME}")


def thing_named(question: str) -> str:
    """The thing whose name the question asks, lower case ("cat" in "What is my cat's
    name?", "girlfriend" in "What is the name of Ana's girlfriend?"), or "" when its
    grammar does not say."""
    q = " ".join(question.split())
    m = _NAME_OF.search(q) or _POSSESSED_NAME.search(q)
    if not m:
        return ""
    word = m.group(1).lower()
    return "" if word in textutil.STOPWORDS else word


def gives_name_of(line: str, question: str) -> bool:
    """False when the line says the thing the question asks the name of, as a word of its
    own (not inside a name: "drinks at the Fat Cat"), and no name the question does not
    already hold is bound to it (module docstring); True otherwise."""
    if not BOUND_NAME:
        return True
    thing = thing_named(question)
    if not thing:
        return True
    stem = textutil.stem(thing)
    mentions = [
        m for m in re.finditer(r"[^\W\d_][\w-]*", line) if textutil.stem(m.group(0).lower()) == stem and not _inside_name(line, m)
    ]
    if not mentions:
        return True
    asked = {_bare(w) for w in re.findall(r"[^\W\d_][\w'’-]*", question)}

    def new(found: re.Match | None) -> bool:
        if not found:
            return False
        return any(_new_name(n, asked) for n in re.findall(r"[A-Z][\w'’-]*", found.group(0)))

    if any(new(m) for m in _NAMING.finditer(line)) or _unplaced_name(line, asked):
        return True
    return any(new(_AFTER.match(line[m.end() :])) or new(_before(line[: m.start()])) for m in mentions)


def _before(text: str) -> re.Match | None:
    """A name standing before the thing ("Mia, her girlfriend", "Mia the cat"). A word
    capitalised because it opens a sentence ("Took the dog to the vet") is a name only when
    punctuation sets it off from the thing."""
    found = _BEFORE.search(text)
    if not found or found.group(1):
        return found
    opening = text[: found.start()].rstrip()
    return None if not opening or opening[-1] in ".!?:" else found


# A preposition of place or of direction before a name: the name is where, not who.
_PLACED = re.compile(r"\b(?:in|at|from|to|near|into|inside|outside|around|via|towards?|across)\s+(?:the\s+)?$", re.I)


def _unplaced_name(line: str, asked: set[str]) -> bool:
    """Whether the line says a name the question does not hold that no preposition of place
    stands before, past the start of a sentence: "Nativity at Isla's school — my niece was a
    sheep" may name the niece; "Ana flew to Crete with her girlfriend" names only a place."""
    for m in re.finditer(r"[A-Z][\w'’-]*", line):
        opening = line[: m.start()].rstrip()
        if not opening or opening[-1] in ".!?:" or not _new_name(m.group(0), asked):
            continue
        # "at Isla's school": the place is the school; Isla is whose it is.
        possessor = m.group(0).endswith(("'s", "’s"))
        if possessor or (not _PLACED.search(line[: m.start()]) and not _inside_placed(line, m)):
            return True
    return False


def _inside_placed(line: str, word: re.Match) -> bool:
    """Whether the word is a later word of a name a preposition of place stands before
    ("Sheffield Museums" after "at")."""
    before = line[: word.start()]
    previous = re.search(r"([A-Z][\w'’-]*)\s+$", before)
    return bool(previous) and (_PLACED.search(before[: previous.start()]) is not None or _inside_placed(line, previous))


def _new_name(word: str, asked: set[str]) -> bool:
    """Whether a capitalised word is a name the question does not hold: not "I" or "I'm"
    (capitalised, no name), nor a month or a weekday."""
    bare = _bare(word)
    return bare not in asked and re.split(r"['’]", bare)[0] not in textutil.STOPWORDS and not said_as.calendar(bare)


def _bare(word: str) -> str:
    return word.lower().removesuffix("'s").removesuffix("’s")


def _inside_name(line: str, word: re.Match) -> bool:
    """Whether a capitalised word stands inside a name of several capitalised words past
    the start of a sentence ("the Fat Cat", "Sheffield Museums"): the name's word, not
    the thing."""
    if not word.group(0)[:1].isupper():
        return False
    before = line[: word.start()].rstrip()
    if not before or before[-1] in ".!?:":
        return False
    previous = re.search(r"([^\W\d_][\w'’-]*)\s*$", before)
    following = re.match(r"\s+([^\W\d_][\w'’-]*)", line[word.end() :])
    return bool((previous and previous.group(1)[:1].isupper()) or (following and following.group(1)[:1].isupper()))
