"""Whom and what a question is about: the names it holds, the words that only ask, and for
a conversation, which words of each line are the named speaker's (whose.py)."""

from __future__ import annotations

import re

from ... import textutil
from ..base import AnswerContext, MemoryNote
from . import whose
from .entities import addressed
from .summary import plain_text

META_TERMS = {
    textutil.stem(w)
    for w in (
        "memory memories know key theme themes summarize summary overview main important recent latest everything stored "
        "store remember tell about note notes connect connects connected link links relate related common thread threads "
        "pattern patterns far lately"
    ).split()
}
QUESTION_WORDS = {
    textutil.stem(w)
    for w in "what when where who whom whose which why how many much long did does do is are was were happen happened".split()
}

_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\w-]*")
_YEAR = re.compile(r"(?:19|20)\d\d")


SPEAKER = re.compile(r"\s*([A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2})\s*:\s")


def plain_words(text: str) -> list[str]:
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]


def names_asked(question: str) -> set[str]:
    """The names a question holds: its capitalised words past the first, not "I", nor the
    noun a year follows ("im Jahr 2024", "im Sommer 2024": German capitalises every noun,
    and the one that names a period is part of the date, not someone asked about)."""
    words = _WORD.findall(question)
    following = [*words[1:], ""]  # each word's next word ("" after the last)
    return {
        w.lower().removesuffix("'s").removesuffix("’s")
        for w, after in zip(words[1:], following[1:], strict=True)
        if w[:1].isupper() and w.lower() not in textutil.STOPWORDS and w.lower() not in META_TERMS and not _YEAR.fullmatch(after)
    }


def without_names(question: str, names: set[str]) -> str:
    """The question without the names it holds, or whole when nothing else would be left."""
    if not names:
        return question
    rest = " ".join(w for w in question.split() if not set(plain_words(w)) & names)
    asks = [t for t in textutil.terms(rest) if t not in QUESTION_WORDS and t not in META_TERMS]
    return rest if asks else question


def named_beyond_address(text: str) -> set[str]:
    """Names a text says outside an address: "Thanks Sam! Sam's cake was great" is about Sam."""
    words = plain_words(text)
    spoken_to = {w.lower() for w in addressed(text)}
    return {w for w in spoken_to if words.count(w) > 1}


def held_by_asked(context: AnswerContext, named: set[str]) -> dict[int, frozenset[str]]:
    """For a question naming a speaker of the conversation: for each line with a speaker,
    the stems that are that speaker's (whose.py). Empty when the question names none."""
    speakers = {m.id: _speaker_name(m) for m in context.memories}
    people = frozenset(v for v in speakers.values() if v)
    asked = named & people
    if not asked:
        return {}
    out: dict[int, frozenset[str]] = {}
    for m in context.memories:
        speaker = speakers[m.id]
        if not speaker:
            continue
        text = m.text or m.summary or ""
        body = text[SPEAKER.match(text).end() :]
        vocatives = frozenset(w.lower() for w in addressed(text)) - named_beyond_address(text)
        theirs: set[str] = set()
        # Only the speakers' names point at someone: "LGBTQ" in "I went to a LGBTQ
        # support group" is named but nobody the words belong to.
        for sentence in textutil.sentences(plain_text(body)):
            for stem, owners in whose.owners(sentence, people=people, vocatives=vocatives).items():
                for owner in owners:
                    if owner == whose.SPEAKER:
                        owner = speaker
                    elif owner == whose.LISTENER:
                        # Two speak: "you" is the other one (whoever is asked about, when
                        # the speaker is not).
                        owner = next(iter(asked)) if speaker not in asked else ""
                    if owner in asked:
                        theirs.add(stem)
        out[m.id] = frozenset(theirs)
    return out


def _speaker_name(m: MemoryNote) -> str:
    """The first name a conversation's line opens with ("Caroline: ..."), lower case, or ""."""
    match = SPEAKER.match(m.text or m.summary or "")
    if not match:
        return ""
    first = match.group(1).split()[0]
    # Labels ("Note: ...", "Summary: ...") are not people.
    return "" if first in textutil.NOT_ENTITIES or first.lower() in textutil.STOPWORDS else first.lower()
