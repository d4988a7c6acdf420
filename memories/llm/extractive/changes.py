"""Does a newer note give another value for the same fact as an older one? By meaning.

The pattern rules (llm/extractive/update_rules.py) know phrasings; this knows none. It reads the two
notes the way the evidence allows for anyone's words:

- the same slot: the newer note has a sentence close in meaning to one of the older
  note's (the embedding layer; nothing is decided without it);
- another value: each of the two sentences holds a value -- a name, a number, a code,
  an address -- that the other note does not say at all ("the Civic" / "a Tesla");
- the same subject: a sentence about someone else ("my brother joined Bosch", "my
  parents live in Cork") does not change the writer's fact;
- a fact, not an event: a past event stays true ("I went to Rome in May" is not undone by
  "I went to Vienna in October"); an older note in the past tense is only replaced when
  the newer one says so ("now", "no longer", "instead"), and a newer one in the past
  tense only when it names the old value ("Sold the Civic and bought a Tesla");
- compatible additions ("also", "too", "as well") are not updates.

The closed classes used (pronouns, tense endings, "now"/"no longer"/"instead") are
grammar, not phrasings of facts; the stopwords of the note's language come from
language.py.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

from ... import textutil
from . import language, similarity

# Cosine of the two closest sentences (multilingual-e5-small, passage to passage) from
# which they are taken to be about the same slot; with a change word, a looser bound.
# Calibrated on tests/data/updates_dev.json and tests/data/update_pairs.json.
SAME_SLOT = 0.90
SAME_SLOT_WITH_CUE = 0.85
# An older note in the past tense is replaced only from this close (a chain's middle link).
SAME_SLOT_PAST = 0.88
MAX_SENTENCES = 12

# Grammar: words that say a fact changed, in the closed classes of English adverbs and
# particles ("now", "no longer", "instead", "anymore"), and the adjective "new".
CHANGE = re.compile(
    r"\b(?:now|no longer|not anymore|any ?more|any longer|instead|from now on|these days|currently|"
    r"switched|changed|moved|replaced|took\\s+(?:it\\s+)?over|handover|reset)\b",
    re.I,
)
# "new" says a thing was replaced when the thing is the other note's ("new dentist" after
# "my dentist"), not when it is another thing ("a new course").
NEW_THING = re.compile(r"\bnew\s+(\w+)", re.I)
ADDITION = re.compile(r"\b(?:also|too|as well|another|in addition|additionally|besides)\b", re.I)
PAST_FRAME = re.compile(r"\b(?:used to|when i was|as a kid|as a child|growing up|years ago|back in)\b", re.I)
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours)\b", re.I)
# "My brother ...", "our neighbours ...": someone else is the subject when the noun after
# the possessive is not in the other note.
POSSESSIVE_SUBJECT = re.compile(r"^\W*(?:(?:so|and|but|well|oh|btw|fyi|today|yesterday)\W+)*(?:my|our)\s+(\w+)", re.I)
THIRD_PERSON_SUBJECT = re.compile(r"^\W*(?:he|she|they|he's|she's|they're)\b", re.I)
# English past tense: a regular ending, or one of the irregular past forms (a closed class).
IRREGULAR_PAST = frozenset(
    "went saw had did got made took came gave met ran ate drank bought sold left found lost won wrote read "
    "spent paid told thought brought caught taught fought flew drove rode swam sang began kept slept felt heard "
    "held built sent sat stood understood broke chose froze spoke stole woke wore tore threw grew knew drew".split()
)
PRESENT = re.compile(r"\b(?:is|are|am|i'm|we're|it's|'s|'re|has|have|now|currently|these days|will|going to)\b", re.I)
NUMBER_WORDS = frozenset(w for w in textutil.NUMBER_WORDS if len(w) > 2)
_TOKEN = re.compile(r"\d[\d,.:/-]*\d|[\w@.'’+-]+")


@dataclass(frozen=True)
class Change:
    old_values: tuple[str, ...]
    new_values: tuple[str, ...]
    closeness: float

    @property
    def reason(self) -> str:
        return f"{', '.join(self.old_values)} -> {', '.join(self.new_values)} (same fact by meaning, {self.closeness:.2f})"


def _tokens(sentence: str) -> list[str]:
    return [t.strip(".,:;'’-") for t in _TOKEN.findall(sentence) if t.strip(".,:;'’-")]


def _values(sentence: str, stops: frozenset[str], names: frozenset[str] = frozenset()) -> list[str]:
    """What a sentence gives as a value: names (capitalised past a sentence's first word,
    or written so elsewhere in the two notes: `names`), numbers, codes and addresses."""
    out = []
    for i, token in enumerate(_tokens(sentence)):
        low = token.lower()
        if any(c.isdigit() for c in token) or "@" in token or low in NUMBER_WORDS:
            out.append(low)
        elif token[:1].isupper() and low not in stops and len(token) > 1 and (i > 0 or low in names):
            out.append(low)
    return out


def _names(text: str) -> frozenset[str]:
    """Words the text capitalises inside a sentence (not as its first word)."""
    out = set()
    for sentence, _ in _units(text):
        out.update(t.lower() for t in _tokens(sentence)[1:] if t[:1].isupper())
    return frozenset(out)


def _mentions(value: str, text_words: set[str]) -> bool:
    if value in text_words:
        return True
    if any(c.isdigit() for c in value):
        return False
    stem = textutil.stem(value)
    return any(textutil.stem(w) == stem for w in text_words)


def _words(text: str) -> set[str]:
    return {t.lower() for t in _tokens(text)}


def _similar_word(word: str, words: set[str]) -> bool:
    """The word, another form of it, or a typo of it ("favorit" for "favourite")."""
    stem = textutil.stem(word)
    for other in words:
        if other == word or textutil.stem(other) == stem:
            return True
        if len(word) > 4 and difflib.SequenceMatcher(None, word, other).ratio() >= 0.8:
            return True
    return False


def _someone_else(sentence: str, other_text: str) -> bool:
    """The sentence is about someone the other note is not about."""
    if THIRD_PERSON_SUBJECT.search(sentence):
        return True
    m = POSSESSIVE_SUBJECT.search(sentence)
    return bool(m) and not _similar_word(m.group(1).lower(), _words(other_text))


def _past_event(sentence: str) -> bool:
    """A report of something done, in the English past tense, with no present in it."""
    if PRESENT.search(sentence):
        return False
    tokens = [t.lower() for t in _tokens(sentence)[:5]]
    return any(t in IRREGULAR_PAST or (t.endswith("ed") and len(t) > 4) for t in tokens)


CLAUSE_BREAK = re.compile(r"\s*[;:]\s*|,\s+(?:and|but|so)\s+|,\s+")


def judge(old_text: str, new_text: str) -> Change | None:
    """The change the new text makes to the old one's fact, or None."""
    if " ".join(old_text.split()).lower() == " ".join(new_text.split()).lower():
        return None
    old_units, new_units = _units(old_text), _units(new_text)
    vectors = similarity.meaning_vectors([c for c, _ in old_units] + [c for c, _ in new_units])
    if vectors is None:
        return None
    vectors = np.asarray(vectors, dtype=np.float32)
    close = vectors[len(old_units) :] @ vectors[: len(old_units)].T
    new_index, old_index = np.unravel_index(int(np.argmax(close)), close.shape)
    closeness = float(close[new_index, old_index])
    # The closest clauses find the slot; their sentences hold its values and cues.
    old_s, new_s = old_units[old_index][1], new_units[new_index][1]
    cue = bool(CHANGE.search(new_s)) or any(
        _similar_word(m.group(1).lower(), _words(old_text)) for m in NEW_THING.finditer(new_s)
    )
    if closeness < (SAME_SLOT_WITH_CUE if cue else SAME_SLOT):
        return None
    if ADDITION.search(new_s) and not re.search(r"\b(?:instead|no longer|anymore)\b", new_s, re.I):
        return None
    if PAST_FRAME.search(new_s) or PAST_FRAME.search(old_s):
        return None
    if _someone_else(new_s, old_text) or _someone_else(old_s, new_text):
        return None
    stops = language.stopwords_for(f"{old_text} {new_text}")
    names = _names(old_text) | _names(new_text)
    if _other_subject(old_s, new_s, names) or _other_owner(old_s, new_s):
        return None
    old_words, new_words = _words(old_text), _words(new_text)
    if not _same_frame(old_s, new_s, stops, names) and not any(_mentions(v, new_words) for v in _values(old_s, stops, names)):
        return None  # "School starts at 8:00" / "Soccer practice moved to 4:30"
    old_all = list(dict.fromkeys(_values(old_s, stops, names)))
    old_values = [v for v in old_all if not _mentions(v, new_words)]
    new_values = [v for v in dict.fromkeys(_values(new_s, stops, names)) if not _mentions(v, old_words)]
    named_old = [v for v in old_all if _mentions(v, new_words)]
    modifiers = _other_kind(old_s, new_s, stops)
    if modifiers and (old_values or new_values):
        return None  # "the team meeting is on Monday" / "the client meeting moved to Tuesday"
    if cue and modifiers:
        old_values, new_values = [modifiers[0]], [modifiers[1]]  # "the payments team" / "now ... the platform team"
    elif cue and not old_values and named_old and new_values:
        # "Tariq took it over from Lena", "New dentist: Dr. Takahashi, Moreau retired".
        old_values = named_old
    elif cue and not old_values and not new_values and CHANGE.search(new_s) and _parallel(old_s, new_s):
        # Values in lower case ("sales associate" -> "regional sales manager"): the words
        # each sentence has that the other note does not, when the newer one says it changed.
        old_values = [w for w in _content(old_s, stops) if not _similar_word(w, new_words)]
        new_values = [w for w in _content(new_s, stops) if not _similar_word(w, old_words) and not CHANGE.fullmatch(w)]
    if not old_values or not new_values:
        return None
    if _mixed(old_values) or _mixed(new_values):
        return None  # "Coffee at Blue Bottle is $5" / "at Starbucks went up to $6": another place's price
    if _kinds(old_values).isdisjoint(_kinds(new_values)):
        return None  # "launches in March" / "booked the venue in Berlin": a date and a place are two facts
    if _past_event(old_s) and (not cue or closeness < SAME_SLOT_PAST):
        return None
    if _past_event(new_s) and not cue and not named_old:
        return None
    return Change(tuple(old_values), tuple(new_values), closeness)


def _first_person(sentence: str, names: frozenset[str]) -> bool:
    """The writer's: a first-person word, or a sentence that opens with its verb ("Sold
    the Civic ...", "Moved to Lyon")."""
    if FIRST_PERSON.search(sentence):
        return True
    first = (_tokens(sentence) or [""])[0].lower()
    return first not in names and (first in IRREGULAR_PAST or first.endswith("ed"))


def _same_frame(old_s: str, new_s: str, stops: frozenset[str], names: frozenset[str]) -> bool:
    """Both sentences are the writer's, or they share a word that is not a value ("the
    rent", "yoga", "number")."""
    if _first_person(old_s, names) and _first_person(new_s, names):
        return True
    frame_old = [w for w in _content(old_s, stops) if w not in names]
    frame_new = {w for w in _content(new_s, stops) if w not in names}
    return any(_similar_word(w, frame_new) for w in frame_old)


def _units(text: str) -> list[tuple[str, str]]:
    """(clause, its sentence) pairs: a long sentence's clauses are compared one by one."""
    out = []
    for sentence in [s for s in textutil.sentences(text) if s.strip()] or [text]:
        parts = [p.strip() for p in CLAUSE_BREAK.split(sentence)] if len(sentence.split()) > 8 else [sentence]
        out.extend((p, sentence) for p in parts if len(p.split()) >= 2)
    return out[:MAX_SENTENCES] or [(text, text)]


def _other_subject(old_s: str, new_s: str, names: frozenset[str]) -> bool:
    """One sentence is the writer's ("I work at Acme"), the other opens with a name
    ("Acme hired a new CFO"): two subjects."""
    for a, b in ((old_s, new_s), (new_s, old_s)):
        first = (_tokens(b) or [""])[0]
        if _first_person(a, names) and not FIRST_PERSON.search(b) and first.lower() in names:
            return True
    return False


def _content(sentence: str, stops: frozenset[str]) -> list[str]:
    return [t.lower() for t in _tokens(sentence) if t.lower() not in stops and len(t) > 2 and not t[:1].isdigit()]


def _parallel(old_s: str, new_s: str) -> bool:
    """The two sentences say it the same way but for the value ("Marco is a sales
    associate" / "Marco is now regional sales manager")."""
    a, b = ([t.lower() for t in _tokens(x)] for x in (old_s, new_s))
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.5


_TIME_WORDS = frozenset(w.lower() for w in (*textutil.MONTH_NAMES, *textutil.WEEKDAYS))


def _kinds(values: list[str]) -> set[str]:
    """What kind of value each is: a quantity (a date, a time, a number, a month or a
    weekday: closed classes) or a word (a place, a name, a thing). One fact's two values
    are of one kind; a date in one note and a place in the other are two facts."""
    return {
        "quantity" if any(c.isdigit() for c in v) or v.lower() in _TIME_WORDS or v.lower() in NUMBER_WORDS else "word"
        for v in values
    }


def _mixed(values: list[str]) -> bool:
    numbers = [v for v in values if any(c.isdigit() for c in v) or v in NUMBER_WORDS]
    return bool(numbers) and len(numbers) < len(values)


_POSSESSIVE = re.compile(r"\b([A-Za-z][\w-]*)['’]s\s+(\w+)")


def _other_owner(old_s: str, new_s: str) -> bool:
    """ "Dad's phone number" after "my phone number", "Jake's brother" after "Jake": a thing
    of someone the other sentence does not give it to."""
    for a, b in ((old_s, new_s), (new_s, old_s)):
        b_low = b.lower()
        for m in _POSSESSIVE.finditer(a):
            owner, thing = m.group(1).lower(), m.group(2).lower()
            if f"{owner}'s" in b_low.replace("’", "'"):
                if not _similar_word(thing, _words(b)):
                    return True  # "Zoe's party" / "Zoe's birthday"
            elif owner not in b_low or re.search(rf"\b(?:my|our)\s+{re.escape(thing)}\b", b_low):
                return True  # "Dad's phone number" / "my phone number"; "Priya's manager" / "my manager"
    return False


def _other_kind(old_s: str, new_s: str, stops: frozenset[str]) -> tuple[str, str] | None:
    """The same noun with another word in front of it ("the team meeting" / "the client
    meeting"): the two words, else None."""
    old_tokens, new_tokens = _tokens(old_s), _tokens(new_s)
    new_lower = [t.lower() for t in new_tokens]
    old_words = {t.lower() for t in old_tokens}
    for j, word in enumerate(new_lower):
        # "the marketing email for the launch" after "the launch": another thing of it.
        if j >= 3 and word in old_words and word not in stops and new_lower[j - 1] in ("the", "a", "an", "our", "my"):
            if new_lower[j - 2] in ("for", "of", "about") and new_lower[j - 3] not in stops and new_lower[j - 3] not in old_words:
                return new_lower[j - 3], word
    for i, token in enumerate(old_tokens):
        word = token.lower()
        if i == 0 or word in stops or word not in new_lower or token[:1].isupper():
            continue
        j = new_lower.index(word)
        if j == 0:
            continue
        before_old, before_new = old_tokens[i - 1], new_tokens[j - 1]
        if any(
            w.lower() in stops or w[:1].isupper() or any(c.isdigit() for c in w) or CHANGE.fullmatch(w)
            for w in (before_old, before_new)
        ):
            continue
        if before_old.lower() != before_new.lower():
            return before_old.lower(), before_new.lower()
    return None
