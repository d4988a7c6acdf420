"""Whom and what a question is about: the names it holds, the words that only ask, and for
a conversation, which words of each line are the named speaker's (whose.py)."""

from __future__ import annotations

import re

from ... import textutil
from ..base import AnswerContext, MemoryNote
from . import language, whose
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
    # A closing quote is no part of the word: "the book 'Piranesi', borrowed" says Piranesi.
    return [w.lower().rstrip("'’").removesuffix("'s").removesuffix("’s") for w in _WORD.findall(text)]


def words_not_asked(line: str, question: str) -> list[str]:
    """The line's content words the question does not say, once each, in the line's order:
    where to look for the word a line uses in place of one the question names."""
    asked_stems = set(textutil.terms(question))
    return list(
        dict.fromkeys(
            w
            for w in plain_words(line)
            if w not in textutil.STOPWORDS and len(w) > 2 and not w[:1].isdigit() and textutil.stem(w) not in asked_stems
        )
    )


def names_asked(question: str) -> set[str]:
    """The names a question holds: its capitalised words past the first, not "I", nor the
    noun a year follows ("im Jahr 2024", "im Sommer 2024": German capitalises every noun,
    and the one that names a period is part of the date, not someone asked about)."""
    words = _WORD.findall(question)
    following = [*words[1:], ""]  # each word's next word ("" after the last)
    return {
        w.lower().removesuffix("'s").removesuffix("’s")
        for w, before, after in zip(words[1:], words[:-1], following[1:], strict=True)
        if w[:1].isupper()
        and w.lower() not in textutil.STOPWORDS
        and w.lower() not in META_TERMS
        and not _YEAR.fullmatch(after)
        and not _common_noun(w, before, question)
    }


def _common_noun(word: str, before: str, question: str) -> bool:
    """In a language that capitalises every noun, a capitalised word after a determiner
    ("meine Schwester Jana", "Welches Auto") or with a noun's suffix is a noun, not a
    name: the name is what follows it, if anything."""
    lang = language.language_of(question)
    if not language.capitalises_nouns(lang):
        return False
    return before.lower() in language.determiners_of(lang) or language.is_noun_by_suffix(word, lang)


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
    speakers = {m.id: speaker_name(m) for m in context.memories}
    by_id = {m.id: m for m in context.memories}
    people = frozenset(v for v in speakers.values() if v)
    asked = named & people
    if not asked:
        return {}
    out: dict[int, frozenset[str]] = {}
    own = {m.id: _speakers_own(m, people) for m in context.memories if speakers[m.id]}
    for m in context.memories:
        speaker = speakers[m.id]
        if not speaker:
            continue
        sentences, vocatives = _line_reading(m)
        # What the turn just before (another speaker's, in the same sequence) held as its
        # speaker's own: this line's sentences with no person word that say it again speak
        # of the other one's thing.
        prior = m.id - 1
        echoed = (
            own.get(prior, frozenset())
            if speakers.get(prior) not in ("", None, speaker) and _same_sequence(m, by_id[prior])
            else frozenset()
        )
        theirs: set[str] = set()
        # Only the speakers' names point at someone: "LGBTQ" in "I went to a LGBTQ
        # support group" is named but nobody the words belong to.
        for sentence in sentences:
            for stem, owners in whose.owners(sentence, people=people, vocatives=vocatives, echoed=echoed).items():
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


def held_by_others(context: AnswerContext, named: set[str]) -> dict[int, frozenset[str]]:
    """For a question naming a speaker: for each line with a speaker, the stems that are
    another speaker's (whose.py), not a third party's. Empty when the question names none."""
    speakers = {name for name in (speaker_name(m) for m in context.memories) if name}
    if not named & speakers:
        return {}
    out: dict[int, frozenset[str]] = {}
    for other in speakers - named:
        for i, stems in held_by_asked(context, {other}).items():
            out[i] = out.get(i, frozenset()) | stems
    return out


def _line_reading(m: MemoryNote) -> tuple[list[str], frozenset[str]]:
    """A speaker's line as whose.owners reads it: the sentences after "Name: ", and the names
    said to someone in it ("Thanks, Caroline!")."""
    text = m.text or m.summary or ""
    body = text[SPEAKER.match(text).end() :]
    vocatives = frozenset(w.lower() for w in addressed(text)) - named_beyond_address(text)
    return textutil.sentences(plain_text(body)), vocatives


def _speakers_own(m: MemoryNote, people: frozenset[str]) -> frozenset[str]:
    """The stems a line holds as its own speaker's (whose.py), echoes aside."""
    sentences, vocatives = _line_reading(m)
    return frozenset(
        stem
        for sentence in sentences
        for stem, owners in whose.owners(sentence, people=people, vocatives=vocatives).items()
        if whose.SPEAKER in owners
    )


def _same_sequence(a: MemoryNote, b: MemoryNote) -> bool:
    group_a, positioned = textutil.source_group(a.source)
    return positioned and group_a == textutil.source_group(b.source)[0]


def speaker_name(m: MemoryNote) -> str:
    """The first name a conversation's line opens with ("Caroline: ..."), lower case, or ""."""
    match = SPEAKER.match(m.text or m.summary or "")
    if not match:
        return ""
    first = match.group(1).split()[0]
    # Labels ("Note: ...", "Summary: ...") are not people.
    return "" if first in textutil.NOT_ENTITIES or first.lower() in textutil.STOPWORDS else first.lower()


# Closed classes: what opens a noun phrase, and the auxiliaries.
# With the quantifiers ("each physio session", "every swim lesson", "both tickets"): grammar.
_QUANTIFIERS = frozenset("each every both either neither".split())
DETERMINERS = frozenset("the a an my your his her our their its this that these those".split()) | _QUANTIFIERS
# After whom it counts, a quantifier floats: "Did Jon and Gina both take part", "they each".
_FLOATED_AFTER = frozenset("we you they them us i".split())
_AUXILIARIES = frozenset("did does do will would can could should shall has have had".split())
_NOT_POSSESSORS = frozenset("who what where when how why that it there here he she".split())
# The participles that ask for a name ("What is the cat called?").
_NAMING = frozenset("called named".split())
# The copula: the verb a question's subject follows ("Where is my father staying?").
_COPULAS = frozenset("is are am was were".split())
# The units a time is counted in: after a determiner they name when ("these days", "at the
# moment", "this week"), not a thing the line must say. A closed class of the calendar.
_TIME_UNITS = frozenset(
    "moment minute minutes hour hours day days night nights week weeks weekend weekends month months year years "
    "morning mornings evening evenings time times season".split()
)


# Words of time that, after a noun, say when and end its phrase.
_TIME_AFTER = frozenset("last next this ago now then today tonight yesterday tomorrow".split())


def asked_nouns(question: str) -> list[str]:
    """The words of the noun phrases a question names things by, read from its grammar: what
    follows a determiner or a possessive ("my dentist's phone number", "Maya's brother",
    "the car insurance renewal"), up to a word of a closed class. Names are not among them
    (they are checked apart), nor the verbs: a phrase that is the subject of an auxiliary
    ("What did the plumber find wrong", "How much did the bike service cost") is read as
    its first word, the rest being the verb and what follows it.
    """
    return [w for phrase in asked_phrases(question) for w in phrase]


def asked_phrases(question: str) -> list[list[str]]:
    """The noun phrases of asked_nouns one by one, each ending in its head ("her booster
    vaccination": booster, vaccination). A participle after the first word is the phrase's
    verb, not a word of it ("When is the boiler getting serviced?": the boiler)."""
    tokens = _WORD.findall(question)
    out: list[list[str]] = []
    room = 0  # words the open phrase may still take
    fresh = False  # the phrase has only just opened: a word like "new" or "other" may come first
    copula = any(t.lower() in _COPULAS for t in tokens[:3])
    for i, token in enumerate(tokens):
        low = token.lower().replace("’", "'")
        # "who's", "what's", "it's": a verb, not a possessive.
        possessive = low.endswith("'s") and low.removesuffix("'s") not in _NOT_POSSESSORS
        bare = low.removesuffix("'s")
        if low in _QUANTIFIERS and i and (tokens[i - 1][:1].isupper() or tokens[i - 1].lower() in _FLOATED_AFTER):
            room = 0
            continue
        if low in DETERMINERS:
            room, fresh = (1 if i and tokens[i - 1].lower() in _AUXILIARIES else 3), True
            out.append([])
            continue
        if bare in textutil.STOPWORDS or bare in QUESTION_WORDS or bare[:1].isdigit():
            if fresh and room and bare not in _AUXILIARIES and bare not in QUESTION_WORDS:
                fresh = False
                continue
            room = 0
        fresh = False
        if room and bare in _NAMING:  # "What is my cat called?": the verb, not a thing
            room = 0
        if room and out and out[-1] and bare in _TIME_AFTER:
            # "my rainy-day fund last time I checked": when, not a word of the thing
            room = 0
        if room and out and out[-1] and _PARTICIPLE.search(bare):
            room = 0
        if room and _ADVERB.search(bare):
            room = 0  # "Dad's cardiology appointment originally booked": how, not a thing
        if room and i + 1 == len(tokens) and copula and _participle(bare) and out:
            # "Where is my father staying?": after the copula's subject, a last word in
            # -ing or -ed is the verb ("is ... staying", "is ... parked"), not a thing named.
            room = 0
        last = i + 1 == len(tokens) or tokens[i + 1].lower() in textutil.STOPWORDS
        if room and bare in _TIME_UNITS and last and tokens[i - 1].lower() in DETERMINERS:
            # "Where does my sister live these days?": when, not what. A time unit that is the
            # whole phrase names a period ("the weekend plan" still names a plan).
            room = 0
            continue
        if room and not (i and token[:1].isupper()):
            out[-1].append(bare)
            room -= 1
        if possessive:
            room, fresh = (1 if i and tokens[i - 1].lower() in _AUXILIARIES else 3), True
            out.append([])
    return [phrase for phrase in out if phrase]


# An English adverb made of an adjective ("originally", "currently", "usually"): the
# adjective's ending, then "-ly" (not "family", "supply", "assembly").
_ADVERB = re.compile(r"^\w{2,}(?:al|ful|ous|ive|ent|ant|less|ate|ar|ish|ed|ing|ic)ly$")
# The endings of an English participle ("getting", "serviced"; not "breed" nor "bed").
_PARTICIPLE = re.compile(r"^\w{3,}(?:ing|[^e]ed)$")


def _participle(word: str) -> bool:
    """An English verb form a copula takes: "staying", "parked" (not "bed", "thing")."""
    return len(word) > 4 and (word.endswith("ing") or word.endswith("ed")) and word[-5:] not in ("thing", "dding")


_ATTRIBUTE = re.compile(
    r"^\W*(?:what|which)\b(?:\s+[\w-]+){0,3}?\s*(?:\s(?:is|are|was|were)\b|['’]s\b)\s+"
    r"(?:(?:the|my|your|his|her|our|their|its)\s+|[A-Z][\w-]*['’]s\s+)+(.*)$",
    re.I,
)


def attribute_asked(question: str) -> set[str]:
    """The noun a "what"/"which" question asks the value of, read from its grammar: the
    phrase after the copula ("What is my job?", "Which city is my home?", "What's Lena's
    salary at the new firm?"). The answer gives the value ("I work as a nurse", "I moved to
    Lyon"), which need not repeat the word; "How much is my rent?" asks a measure of a
    thing named, and "What is my cat called?" names the cat, not an attribute of it."""
    # An English noun phrase ends in its head: "my blood type" asks a type, of blood.
    return set(attribute_phrase(question)[-1:])


def attribute_phrase(question: str) -> list[str]:
    """The whole noun phrase attribute_asked reads its head from ("blood type")."""
    m = _ATTRIBUTE.match(" ".join(question.split()))
    if not m:
        return []
    phrase: list[str] = []
    for token in _WORD.findall(m.group(1)):
        bare = token.lower().replace("’", "'").removesuffix("'s")
        if bare in _NAMING:
            return []  # "What is my cat called?" asks the cat's name
        if bare in textutil.STOPWORDS or bare in DETERMINERS or token[:1].isupper() or bare[:1].isdigit():
            if phrase:
                break
            continue
        phrase.append(bare)
    return phrase
