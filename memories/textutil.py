"""Plain-text helpers shared by the offline engine and recall: no model, no I/O."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import date
from functools import lru_cache

# Counts written as words, as dates ("two weeks ago") and answers ("three times") use them.
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
    each few for from further get gets got had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let's like me more most mustn't my myself no nor not now of off on once only or other ought our ours
    ourselves out over own really same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up upon us very was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would wouldn't yes
    yet you you'd you'll you're you've your yours yourself yourselves one two also still even much many well done
    thing things lot lots yeah oh hey hi wow okay ok sure thanks thank gonna wanna kind sort maybe way ever
    always never something anything everything nothing someone anyone everyone go going goes went gone make
    made makes making know knew known think thought see saw seen say said says tell told want wanted take took
    come came use used new good great nice really pretty quite just around since via per etc""".split()
)

# A word: letters and digits of any script (what SQLite FTS5's unicode61 tokenizer and
# PostgreSQL's parser take as one), with inner apostrophes and hyphens.
_WORD_RE = re.compile(r"[^\W_](?:[^\W_]|['’\-])*")
# A title's full stop ("Mr. Okafor", "Dr. Braun", and typed in lower case: "dr. Weiss")
# does not end a sentence.
_TITLE_STOP = "".join(f"(?<!\\b{t}\\.)" for t in ("Mr", "Mrs", "Ms", "Dr", "Prof", "mr", "mrs", "ms", "dr", "prof"))
_SENTENCE_RE = re.compile(rf"(?<=[.!?]){_TITLE_STOP}\s+(?=[\"'“(\[]?[A-Z0-9])|\n{{2,}}|\n(?=[-*•#]|\d+[.)]\s)")
# Notes typed on a phone start sentences in lower case ("ECF approved!! new deadline is 16
# May. breathe."): "!" or "?" ends one whatever follows, and so does a full stop after a
# word of three letters or more that is no abbreviation of the closed class below ("approx.
# two hours", "etc. and", "z.B. morgen"); a dotted one ("e.g.", "i.e.") has inner dots.
_ABBREVIATIONS = frozenset(
    """approx appt apt ave bzw ca cf dept env esp est etc excl fig incl max min mins misc nos pcs ref sec tel usw viz vol vs
    wks yrs hrs aprox pág resp""".split()
)
_LOWER_START = re.compile(r"(?<=[!?])\s+(?=[a-zà-ÿ])|(?<=[^\W\d_]{3}\.)\s+(?=[a-zà-ÿ])")


def words(text: str) -> list[str]:
    """Lower-cased word tokens of any script, with possessives and edge hyphens dropped."""
    out = []
    for raw in _WORD_RE.findall(unicodedata.normalize("NFC", text)):
        token = raw.lower().replace("’", "'").strip("-'")
        if token.endswith("'s"):
            token = token[:-2]
        if token:
            out.append(token)
    return out


@lru_cache(maxsize=100_000)
def fold(token: str) -> str:
    """A word as the index compares it: lower case, diacritics removed (FTS5's unicode61
    with remove_diacritics 2: "Genève" -> "geneve", "Москве" -> "москве")."""
    decomposed = unicodedata.normalize("NFKD", token.lower())
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


# Scripts written without spaces: a run of them is one token to FTS5 and PostgreSQL, so a
# word inside it is found by substring (see recall/search.py, _substring_search).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_CJK_RUNS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[\u30a0-\u30ff\uff66-\uff9f]{2,}")


def has_cjk(token: str) -> bool:
    return bool(_CJK.search(token))


def cjk_terms(token: str) -> list[str]:
    """The content pieces of a Chinese or Japanese run: runs of ideographs and of katakana;
    hiragana (particles and endings, in Japanese) separates them."""
    return _CJK_RUNS.findall(token)


def stem(token: str) -> str:
    """A light suffix stripper: enough to match plan/plans/planned/planning."""
    if len(token) <= 3 or token.isdigit():
        return token
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("edly", ""), ("ed", ""), ("es", ""), ("s", ""), ("ly", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            base = token[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # planning -> plann -> plan
            if suffix == "s" and token.endswith("ss"):
                return token
            return base
    return token


def terms(text: str) -> list[str]:
    """Stemmed content words: what matching and scoring count."""
    return [stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def sentences(text: str) -> list[str]:
    parts = (p.strip(" \t\r\n-*•") for p in _SENTENCE_RE.split(text))
    return [" ".join(q.split()) for p in parts if p for q in _lower_case_starts(p) if len(q.strip()) > 1]


def _lower_case_starts(text: str) -> list[str]:
    out, start = [], 0
    for m in _LOWER_START.finditer(text):
        before = text[start : m.start()]
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        if last.endswith(".") and ("." in last[:-1] or last[:-1].lower() in _ABBREVIATIONS):
            continue
        out.append(before)
        start = m.end()
    out.append(text[start:])
    return out


def estimate_tokens(text: str) -> int:
    """Rough token count (about four characters a token for English)."""
    return max(1, (len(text) + 3) // 4) if text else 0


def shingles(text: str, size: int = 3) -> set[str]:
    """Overlapping runs of `size` words of the normalised text."""
    tokens = words(text)
    if len(tokens) < size:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


_MERSENNE = (1 << 61) - 1
_MINHASH_SEEDS = [
    (
        int.from_bytes(hashlib.blake2b(f"a{i}".encode(), digest_size=8).digest(), "big") % _MERSENNE | 1,
        int.from_bytes(hashlib.blake2b(f"b{i}".encode(), digest_size=8).digest(), "big") % _MERSENNE,
    )
    for i in range(8)
]


def minhash_bands(text: str, bands: int = 4, rows: int = 2) -> list[int] | None:
    """Locality-sensitive buckets for near-duplicate search: MinHash over word shingles,
    `bands` buckets of `rows` hashes each. Texts with shingle Jaccard 0.8 share a bucket
    with probability 1-(1-0.8**2)**4 = 98%; unrelated texts almost never do.
    None for texts too short for the comparison to mean anything."""
    grams = shingles(text)
    if len(grams) < 3:
        return None
    hashed = [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=8).digest(), "big") for g in grams]
    signature = [min((a * h + b) % _MERSENNE for h in hashed) for a, b in _MINHASH_SEEDS[: bands * rows]]
    out = []
    for band in range(bands):
        chunk = ",".join(map(str, signature[band * rows : (band + 1) * rows])).encode()
        # 31 bits: fits a signed integer column on every database.
        out.append(int.from_bytes(hashlib.blake2b(chunk, digest_size=4).digest(), "big") >> 1)
    return out


# Month and weekday names, as a text writes them (the date readers and the name finders).
MONTH_NAMES = (
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
).split()
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
# The weekdays as one regex alternation, for patterns compiled case-insensitively.
WEEKDAY_PATTERN = "|".join(day.lower() for day in WEEKDAYS)
# Weekdays as people shorten them ("Tues", "Weds"). "mon", "wed", "sat" and "sun" are also
# words of their own in lower case: a reader that cannot tell by case leaves them out.
WEEKDAY_SHORT = {
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "weds": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
    "sat": "saturday",
    "sun": "sunday",
}
# Capitalised words that are not names: a sentence's opening word, a label, a month. The
# offline engine's entity finder and recall's speaker signal ("Note: ..." is nobody) read it.
NOT_ENTITIES = (
    {w.capitalize() for w in STOPWORDS}
    | {
        "I",
        "OK",
        "Yes",
        "No",
        "Mr",
        "Mrs",
        "Ms",
        "Dr",
        "Also",
        "Then",
        "Today",
        "Tomorrow",
        "Yesterday",
        "Summary",
        "Notes",
        "Note",
        "Action",
        "Items",
        "Todo",
        "TODO",
        "Re",
        "Fwd",
    }
    | set(MONTH_NAMES)
)


_POSITION = re.compile(r"(.+):[A-Za-z]{0,3}\d{1,9}")


def source_group(source: str) -> tuple[str, bool]:
    """The sequence a memory belongs to: "chat:D3:14" is turn 14 of "chat:D3", "report.pdf:7"
    part 7 of "report.pdf" (a source that ends in a position), and the turns or parts
    around it are its neighbours. Any other source ("api", "notes", a URL) names no
    sequence: memories that share it are separate notes, and none lends another support."""
    m = _POSITION.fullmatch(source or "")
    if m:
        return m.group(1), True
    return source or "", False


# What was before, with no date to read it by: "before", "previously", "originally", "used
# to", "my previous/old/original ..." (adverbs and adjectives of earlier time, a closed class
# in each language). In English the question's verb must be past too ("Where did I live
# before the move?", not "What do I need before the move?"); the other languages' words
# below say the earlier time by themselves (de, es, fr, pt, it, nl).
_BEFORE = re.compile(
    r"\b(?:before|previous(?:ly)?|former(?:ly)?|original(?:ly)?|used to|back then|first)\b"
    r"|\bthe\s+old\b|\bmy\s+old\b",
    re.I,
)
_BEFORE_OTHER_LANGUAGES = re.compile(
    r"\b(?:vorher|früher|ursprünglich|zuvor|davor|bevor"
    r"|antes|anteriormente|originalmente|al\s+principio|no\s+início"
    r"|avant|auparavant|autrefois|à\s+l'origine|au\s+début"
    r"|prima|precedentemente|all'inizio|originariamente"
    r"|vroeger|eerder|voorheen|oorspronkelijk|eerst)\b",
    re.I,
)
# Of those, the ones that ask for the earliest: "first", "originally", "at first".
_EARLIEST = re.compile(
    r"\b(?:first|original(?:ly)?|ursprünglich|originalmente|al\s+principio|no\s+início|à\s+l'origine|au\s+début"
    r"|all'inizio|originariamente|oorspronkelijk|eerst)\b",
    re.I,
)
# A past verb: the auxiliaries, or a regular past ("owned", "lived"; not "need").
_PAST_TENSE = re.compile(r"\b(?:did|was|were|had|used to|[a-z]{2,}[^\We]ed)\b", re.I)


def asks_what_was_before(question: str | None) -> bool:
    """The question asks what held before, naming no date ("Who was my previous GP?",
    "Welchen Stromanbieter hatte ich ursprünglich?")."""
    question = question or ""
    return bool((_BEFORE.search(question) and _PAST_TENSE.search(question)) or _BEFORE_OTHER_LANGUAGES.search(question))


# "before" and what follows it, to the end of the question: what the question dates the
# earlier time by ("before Brightwater", "avant le Dr Benali", "before IT migrated the
# accounts"). The prepositions of earlier time are a closed class of each language.
_BEFORE_MARK = re.compile(
    r"\s*\b(?:before|bevor|vor|avant(?:\s+(?:que|qu'))?|antes\s+d(?:[aeo]s?|el)|antes\s+que|prima\s+d(?:i|el|ella|ello|ei|egli|'))"
    r"\s+(?P<mark>[^?!.]+?)\s*(?=[?!.]*\s*$)",
    re.I,
)


_MONTH_WORDS = frozenset(w.lower() for w in MONTH_NAMES)
# The articles and possessives a noun phrase opens with, a closed class of each language.
_DETERMINERS = frozenset(
    "the a an my our his her their le la les l' un une mon ma mes el los las mi mis der die das dem den ein eine mein "
    "meine il lo gli i o os as um uma meu minha".split()
)


def _later_mark(question: str) -> re.Match | None:
    """Where "before" and what the question dates the earlier time by stand ("before
    Brightwater Analytics"), in a question that asks what was before; None when what follows
    is a date (recall reads it as one: "two weeks before August 11") or an event told by a
    verb ("before meeting Maria"), not a later value."""
    if not asks_what_was_before(question):
        return None
    m = _BEFORE_MARK.search(question)
    mark = m.group("mark").strip() if m else ""
    if not mark or any(c.isdigit() for c in mark) or any(w.lower() in _MONTH_WORDS for w in words(mark)):
        return None
    if not (mark[:1].isupper() or mark.split()[0].lower() in _DETERMINERS):
        return None
    return m


def later_mark(question: str) -> str:
    """What a question about the time before dates it by ("Octopus" of "Which energy
    company was I with before Octopus?"), or ""."""
    m = _later_mark(question)
    return m.group("mark").strip() if m else ""


def before_date(question: str) -> date | None:
    """The first day of the month or year a question about the time before names ("What
    was my dose before September 2025?", "Where did I live before 2023?"), or None (no
    year, or no "before" of the past)."""
    if not asks_what_was_before(question):
        return None
    m = _BEFORE_MARK.search(question)
    if not m:
        return None
    said = re.fullmatch(r"(?:(?P<month>[^\W\d_]+)\.?\s+)?(?P<year>(?:19|20)\d\d)", m.group("mark").strip())
    if not said:
        return None
    month = 1
    if said.group("month"):
        names = [n.lower() for n in MONTH_NAMES]
        if said.group("month").lower() not in names:
            return None
        month = names.index(said.group("month").lower()) % 12 + 1
    return date(int(said.group("year")), month, 1)


def without_later_mark(question: str) -> str:
    """A question about what held before something, without that something: "Where did I
    work before Brightwater Analytics?" asks "Where did I work?" of the time before, and the
    line that answers it names the older value, not the newer one the question dates it by."""
    m = _later_mark(question)
    return (question[: m.start()] + question[m.end() :]).strip() if m else question


# How a question asks about now ("What's the band called these days?", "Wer ist zurzeit
# ..."): a closed class of deictic adverbials of each grammar. They say when, not what
# about: a line need not say "days" to answer it.
_NOW_ASKED = re.compile(
    r"\b(?:these days|nowadays|at the moment|at present|right now|currently|presently|as things stand"
    r"|zurzeit|derzeit|momentan|aktuell|im moment|gerade|actuellement|en ce moment|de nos jours|à présent"
    r"|actualmente|hoy en día|en este momento|hoje em dia|atualmente|neste momento|attualmente|al momento|oggigiorno"
    r"|tegenwoordig|momenteel|op dit moment|obecnie|w tej chwili|för närvarande|numera|nuförtiden)\b",
    re.I,
)


def without_now_words(question: str) -> str:
    """The question without the words by which it asks about now: "What's the band called
    these days?" asks "What's the band called?" of the present."""
    return re.sub(r"\s+([?.!,;:])", r"\1", " ".join(_NOW_ASKED.sub(" ", question).split()))


def asks_for_the_earliest(question: str | None) -> bool:
    """Of those, a question about the first ("What editor did I use first?")."""
    return bool(_EARLIEST.search(question or ""))
