"""What kind of thing a question asks for, and whether (and how much) a sentence gives it.

Two readings of the question. `wants`/`fits` score sentences for what the question asks
(a decision, a person, a date, a place, a number, an overview). `asked_for`/`could_answer`
decide whether a line can be the answer at all: "What time is the dentist appointment?" is
not answered by "Dentist appointment on Tuesday 9 April" (every word of the question, no
time); "How much did the desk cost?" needs an amount, "Who fixed the boiler?" a person,
"What is the cat called?" a name. The kind is read from the question's grammar (its
wh-word and, after "what"/"which", its head noun), a closed class; whether a sentence
holds one from its form (numbers, clock times and dates by pattern, names by the entity
reader, places by a preposition of place before a noun) and, for a kind after "what"/
"which" ("what colour"), by meaning. A question whose kind this cannot read (why, how,
what did X do) asks for nothing in particular here: every sentence could answer it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import textutil
from . import similarity
from .entities import AMOUNT_RE, DATE_RE, extract_entities
from .relative_dates import RELATIVE_RE

_DECISION_Q = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|plan\w*|conclu\w*|resolv\w*|settled|chose|choose|commit\w*|outcome)\b", re.I
)
_DECISION_S = re.compile(
    r"\b(?:decid\w*|decision\w*|agree\w*|will|shall|ships?|launch\w*|owns?|leads?|starts?|deadline|due|by\s+(?:the\s+)?(?:end|[A-Z]\w+\s+\d)|"
    r"capped|approved?|plan(?:s|ned)?\s+to|going\s+to|committed|assigned|next\s+step\w*|action\s+items?)\b",
    re.I,
)
_WHO_Q = re.compile(r"^\s*(?:who|whom|whose)\b|\bwhich\s+(?:person|people|colleague|friend|one)\b", re.I)
_WHEN_Q = re.compile(
    r"^\s*when\b|\bwhat\s+(?:date|day|time|year|month|week)\b|\bhow\s+long\s+ago\b|\bwhich\s+(?:year|month|day)\b", re.I
)
_WHERE_Q = re.compile(r"^\s*where\b|\bwhich\s+(?:city|country|place|town)\b", re.I)
_BROAD_Q = re.compile(
    r"\b(?:know|say|says|said|tell|learn\w*|think|read)\b.{0,80}\babout\b|^\s*(?:summari[sz]e|what\s+about)\b", re.I
)
_COUNT_Q = re.compile(r"\bhow\s+(?:many|much|long|often|old|far)\b", re.I)
_NUMBER = re.compile(
    r"\b\d+(?:[.,]\d+)?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|dozen|once|twice)\b",
    re.I,
)
_PLACE_S = re.compile(r"\b(?:in|at|from|to|near|moved|live[sd]?|living|visit\w*)\s+(?:the\s+)?\w", re.I)


def wants(question: str) -> set[str]:
    wants = set()
    if _DECISION_Q.search(question):
        wants.add("decision")
    if _WHO_Q.search(question):
        wants.add("who")
    if _WHEN_Q.search(question):
        wants.add("when")
    if _WHERE_Q.search(question):
        wants.add("where")
    if _COUNT_Q.search(question):
        wants.add("count")
    if _BROAD_Q.search(question):
        wants.add("broad")
    return wants


def fits(sentence: str, wants: set[str], question: str = "") -> float:
    bonus = 0.0
    asked = question.lower()
    if "decision" in wants and _DECISION_S.search(sentence):
        bonus += 0.35
    if "when" in wants and (
        DATE_RE.search(sentence) or RELATIVE_RE.search(sentence) or re.search(r"\b(?:19|20)\d\d\b", sentence)
    ):
        bonus += 0.3
    if "count" in wants and (_NUMBER.search(sentence) or AMOUNT_RE.search(sentence)):
        bonus += 0.3
    # The answer to "who" or "where" is a name the question does not already hold.
    new_names = [e for e in extract_entities(sentence) if e[:1].isupper() and not DATE_RE.fullmatch(e) and e.lower() not in asked]
    if "who" in wants and new_names:
        bonus += 0.3
    if "where" in wants and new_names and _PLACE_S.search(sentence):
        bonus += 0.3
    return bonus


# --- whether a line can be the answer at all -----------------------------------------

PERSON, PLACE, DATE, TIME, AMOUNT, NUMBER, DURATION, NAME, KIND = (
    "person",
    "place",
    "date",
    "time",
    "amount",
    "number",
    "duration",
    "name",
    "kind",
)

# Kinds said by a number or a clock time: patterns many lines hold.
COUNTED = frozenset({AMOUNT, NUMBER, TIME, DURATION})


@dataclass(frozen=True)
class Asked:
    kind: str
    # The noun after "what"/"which" ("airline" in "Which airline did Robin fly with?"): the
    # word the answer is an instance of, so a line need not say it.
    head: str = ""


# Grammar of the question, closed classes only: wh-words, auxiliaries, "kind of".
_AUX = (
    "is|are|was|were|am|be|been|do|does|did|done|has|have|had|can|could|will|would|shall|should|may|might|must|"
    "happened|happens|made|makes|caused|causes|kind|type|sort"
)
_HOW = re.compile(r"\bhow\s+(long\s+ago|long|much|many|old|far)\b", re.I)
_TIME_Q = re.compile(r"\b(?:what|which)\s+time\b", re.I)
_DATE_Q = re.compile(
    r"^\W*when\b|\b(?:what|which)\s+(?:date|day|year|month|week|weekday)\b|\bwhen\s+(?:is|was|did|does|will)\b", re.I
)
_KIND_WHO = re.compile(r"\b(?:who|whom|whose)\b", re.I)
_KIND_WHERE = re.compile(r"\bwhere\b|\b(?:what|which)\s+(?:city|country|town|village|place|county|state|street|address)\b", re.I)
_NAME_Q = re.compile(
    r"\bwhat(?:\s+is|'s|\s+was|\s+are|\s+were)\s+(?:the\s+)?(?:name|names|title|titles)\s+of\b"
    # "What's my dog called?"; not "What was called off?"
    r"|\bwhat(?:\s+is|\s+was|\s+are|\s+were|'s|’s)\s.*\b(?:called|named)\W*$"
    r"|\bwhat\s+(?:did|does|do|will)\b.+\b(?:name|call)\b"
    r"|\bwhat\s+(?:name|title)\b"
    # "What is my brother's name?", "What's the band's name?", "What's our band name?"
    r"|\bwhat(?:\s+is|'s|’s|\s+was|\s+are|\s+were)\s+(?:(?:the|my|your|his|her|our|their)\s+)?[\w-]+(?:['’]s?)?\s+(?:\w+\s+)?(?:name|names|title|titles)\s*\??\s*$",
    re.I,
)
_KIND_Q = re.compile(
    rf"\b(?:what|which)\s+(?:(?:kind|type|sort)\s+of\s+)?(?!(?:{_AUX})\b)([a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}})", re.I
)

# Forms of an answer.
# (A number's unit may be glued on: "5mg", "2.5ml", "10km"; not an ordinal's ending.)
_NUMBER_SPAN = re.compile(
    r"\b\d+(?:[.,]\d+)*(?:\b|(?=(?!(?:st|nd|rd|th)\b)[^\W\d_]{1,3}\b))|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"twenty|thirty|forty|fifty|sixty|hundred|thousand|million|dozen|once|twice|half|a\s+couple)\b",
    re.I,
)
# A clock time in digits, with a colon or "am"/"pm" ("2:40pm", "9am"; not "12.50", a price),
# or as the 24-hour clock is written across Europe ("15h", "16h30", "17 Uhr", "8 uur").
_CLOCK_24 = r"\b\d{1,2}h(?:\d{2})?\b|\b\d{1,2}(?:[:.]\d{2})?\s*(?:uhr|uur)\b"
_CLOCK_DIGITS = re.compile(
    rf"\b\d{{1,2}}:\d{{2}}\s*(?:[ap]\.?m\.?)?|\b\d{{1,2}}\s*(?:[ap]\.?m\.?|o'clock)(?!\w)|{_CLOCK_24}", re.I
)
_CLOCK = re.compile(
    rf"{_CLOCK_24}|"
    r"\b\d{1,2}(?:[:.]\d{2})\s*(?:[ap]\.?m\.?)?|\b\d{1,2}\s*(?:[ap]\.?m\.?|o'clock)(?!\w)|\b(?:noon|midday|midnight)\b"
    r"|\b(?:at|by|from|until|till)\s+\d{1,2}\b|\b(?:morning|afternoon|evening|tonight|lunchtime|dawn|dusk)\b",
    re.I,
)
_UNIT = r"(?:second|minute|hour|day|night|week|weekend|month|year|term|season|fortnight)s?"
_DURATION = re.compile(
    rf"\b(?:\d+(?:[.,]\d+)?|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|few|several|couple\s+of)\s+(?:\w+\s+)?{_UNIT}\b"
    r"|\b(?:fortnight|overnight|all\s+(?:day|night|week|weekend))\b|\b(?:until|till|through|since)\s+\w",
    re.I,
)
_DAYS = "|".join(d.lower() for d in textutil.WEEKDAYS)
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DATE = re.compile(
    rf"\b(?:{_DAYS}|{_MONTHS}|tomorrow|yesterday|today|tonight|ago|weekend|christmas|easter)\b"
    r"|\b(?:19|20)\d\d\b|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:next|last|this|past|coming)\s+(?:week|month|year|summer|winter|spring|autumn|fall)\b",
    re.I,
)
# A preposition of place before what it places ("near the office", "at St Mary's").
_LOCATIVE = re.compile(
    r"\b(?:in|at|from|to|near|into|inside|outside|around|behind|opposite|beside|across|towards?)\s+"
    r"(?:(?:the|a|an|my|our|his|her|their|your)\s+)?([\w'’-]+)",
    re.I,
)
_LOCATIVE_BEFORE = re.compile(r"\b(?:in|at|from|near|on|into|inside)\s+(?:the\s+)?$", re.I)
# Someone named by how they stand to someone ("my sister", "her coach"): a person's answer.
_RELATION = re.compile(r"\b(?:my|our|his|her|their|your)\s+([a-z][\w-]*)", re.I)
# A title of address before a word names a person, in whatever case it is typed ("going to
# dr okafor now"): the titles are a closed class.
_TITLED = re.compile(r"\b(?:dr|mr|mrs|ms|mx|prof|herr|frau|sr|sra|mme)\.?\s+([^\W\d_][\w'’-]+)", re.I)
_QUOTED = re.compile(r"[\"“'‘]([^\"”'’]{2,80})[\"”'’]")


def kind_asked(question: str) -> Asked | None:
    """The kind of thing the question asks for, or None when its grammar does not say."""
    q = " ".join(question.split())
    how = _HOW.search(q)
    if how:
        word = " ".join(how.group(1).lower().split())
        return Asked({"long ago": DATE, "long": DURATION, "much": AMOUNT}.get(word, NUMBER))
    if _TIME_Q.search(q):
        return Asked(TIME)
    if _DATE_Q.search(q):
        return Asked(DATE)
    if _KIND_WHO.match(q) or re.match(r"^\W*(?:\w+\s+){0,3}?(?:who|whom|whose)\b", q, re.I):
        return Asked(PERSON)
    if _KIND_WHERE.search(q):
        return Asked(PLACE)
    if _NAME_Q.search(q):
        return Asked(NAME)
    kind = _KIND_Q.search(q)
    if kind:
        # The noun phrase ends at the first word of a closed class ("which mobile provider
        # am I with": "mobile provider").
        phrase = []
        for word in kind.group(1).split():
            if phrase and word[:1].isupper():  # a name ends it ("what motivated Caroline")
                break
            if word.lower() in textutil.STOPWORDS or re.fullmatch(_AUX, word.lower()):
                break
            phrase.append(word.lower())
        if phrase:
            return Asked(KIND, head=" ".join(phrase))
    return None


def could_answer(sentence: str, asked: Asked | None, question: str) -> bool:
    """False when the sentence cannot be the answer for want of the kind asked for: no
    amount for "how much", no clock time for "what time", no name for "who" or "what is
    it called". A date is never wanting (a note's own day may answer "when"), nor a kind
    after "what"/"which" (an open class: "pottery" answers "what activity")."""
    if asked is None or asked.kind in (DATE, KIND):
        return True
    return holds(sentence, asked, question)


def holds(sentence: str, asked: Asked | None, question: str) -> bool:
    """Whether the sentence holds a span of the asked kind that the question does not
    already hold ("Where is Tom's wedding?" is not answered by "Tom is getting married in
    September": a month is no place). For a kind after "what"/"which": a name the question
    does not say ("booked with TAP" for "which airline"), or the head noun itself."""
    if asked is None:
        return False
    asked_words = set(_words(question))
    if asked.kind == AMOUNT:
        return bool(AMOUNT_RE.search(sentence) or _new_amounts(sentence, asked_words))
    if asked.kind == NUMBER:
        return bool(_new(_NUMBER_SPAN, sentence, asked_words))
    if asked.kind == TIME:
        return bool(_new(_CLOCK, sentence, asked_words))
    if asked.kind == DURATION:
        return bool(_new(_DURATION, sentence, asked_words))
    if asked.kind == DATE:
        return bool(DATE_RE.search(sentence) or _new(_DATE, sentence, asked_words))
    names = _new_names(sentence, asked_words)
    if asked.kind == PERSON:
        if any(not placed for _, placed in names):
            return True
        return any(m.group(1).lower() not in asked_words for m in (*_RELATION.finditer(sentence), *_TITLED.finditer(sentence)))
    if asked.kind == PLACE:
        if names:
            return True
        return any(_place_word(m.group(1), asked_words) for m in _LOCATIVE.finditer(sentence))
    if asked.kind == NAME:
        return bool(names) or any(not set(_words(m.group(1))) <= asked_words for m in _QUOTED.finditer(sentence))
    # KIND: a named instance ("booked with TAP" for "which airline"), or the head noun said.
    return bool(names) or bool(set(asked.head.split()) & set(_words(sentence)))


def _words(text: str) -> list[str]:
    return [w.lower().removesuffix("'s").removesuffix("’s") for w in re.findall(r"[^\W_][\w'’-]*", text)]


def _new(pattern: re.Pattern, sentence: str, asked_words: set[str]) -> bool:
    return any(not set(_words(m.group(0))) <= asked_words for m in pattern.finditer(sentence))


def _new_amounts(sentence: str, asked_words: set[str]) -> bool:
    """A number that can be an amount: in digits, or spelled out before what it counts
    ("forty quid", "two hundred"). A spelled-out number before a word of a closed class is
    a pronoun as often ("my cousin teaches one in Kreuzberg", "the blue one is nicer")."""
    clocks = [c.span() for c in _CLOCK_DIGITS.finditer(sentence)]
    for m in _NUMBER_SPAN.finditer(sentence):
        if set(_words(m.group(0))) <= asked_words:
            continue
        if any(start <= m.start() < end for start, end in clocks):
            continue  # a clock time's hour ("2:40pm") counts no money
        if m.group(0)[:1].isdigit():
            return True
        after = _words(sentence[m.end() :])[:1]
        if after and after[0] not in textutil.STOPWORDS:
            return True
    return False


def _new_names(sentence: str, asked_words: set[str]) -> list[tuple[str, bool]]:
    """The names the sentence says that the question does not (no dates), each with
    whether a preposition of place stands before it (a place, not a person)."""
    body = re.sub(r"^\s*[A-Z][\w'’.-]*(?: [A-Z][\w'’.-]*){0,2}\s*:\s", "", sentence)  # a speaker's label
    out = []
    for name in extract_entities(body):
        words = _words(name)
        if (
            not name[:1].isupper()
            or not words
            or set(words) <= asked_words
            or DATE_RE.fullmatch(name)
            or _DATE.fullmatch(name.lower())
        ):
            continue
        at = body.find(name)
        out.append((name, bool(_LOCATIVE_BEFORE.search(body[: max(at, 0)]))))
    return out


def _place_word(word: str, asked_words: set[str]) -> bool:
    low = word.lower().removesuffix("'s")
    return low not in asked_words and low not in textutil.STOPWORDS and not _DATE.fullmatch(low) and not low[:1].isdigit()


def kind_by_meaning(sentence: str, asked: Asked | None, question: str) -> bool | None:
    """For a kind after "what"/"which" ("what colour", "what flavour"): whether the sentence
    says a word nearer in meaning to the head noun than anything the question itself says
    ("green" is nearer "colour" than "kitchen" is; "bakery" is not nearer "flavour" than
    "cake"). None when there is no meaning to read it by, or nothing to compare."""
    if asked is None or asked.kind != KIND or not asked.head:
        return None
    asked_words = set(_words(question))
    own = [w for w in dict.fromkeys(_words(question)) if w not in textutil.STOPWORDS and w not in asked.head.split()]
    new = [w for w in dict.fromkeys(_words(sentence)) if w not in asked_words and w not in textutil.STOPWORDS and len(w) > 2]
    if not own or not new:
        return None if not own else False
    vectors = similarity.meaning_vectors([asked.head, *own, *new])
    if vectors is None:
        return None
    close = vectors[1:] @ vectors[0]
    return bool(close[len(own) :].max() > close[: len(own)].max() + KIND_MARGIN)


# How much nearer the head noun a word of the sentence must be than the question's own.
KIND_MARGIN = 0.0
