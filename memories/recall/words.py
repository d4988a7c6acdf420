"""The word handling recall repeats for every candidate, cached: stems, key words of
entities and topics, and the question words a memory holds (for its reasons)."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
import zlib
from collections.abc import Set
from functools import lru_cache
from types import CodeType

from .lexical_query import query_words
from ..textutil import STOPWORDS, fold, stem, words

# Recall stems the same few thousand words over and over; remembering them is most of its speed.
cached_stem = lru_cache(maxsize=100_000)(stem)


def terms(text: str) -> list[str]:
    """textutil.terms with the stem cache."""
    return [cached_stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


_SPLIT = re.compile(r"[\W_]+")


@lru_cache(maxsize=100_000)
def _keys_of(joined: str) -> frozenset[str]:
    # Hundreds of memories new to this cache a question at 100k, made of the same few
    # thousand words: each word's key is made once (_key_of), not folded again per memory.
    keys = {_key_of(t) for t in _SPLIT.split(joined.lower())}
    keys.discard(None)
    return frozenset(keys)


@lru_cache(maxsize=100_000)
def _key_of(token: str) -> str | None:
    return cached_stem(fold(token)) if token and token not in STOPWORDS else None


@lru_cache(maxsize=100_000)
def words_of(joined: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(query_words(joined)))


def json_words(value) -> str:
    """The words of a JSON list as plain SQL hands it over: JSON text (both databases, by
    Django's loaders) or a list (an ORM instance). The brackets and quotes split away with
    the rest; escaped letters do not (SQLite's text is written with ensure_ascii, so "Zoë"
    reads "Zo\\u00eb": split as it stands, its keys would be "zo" and "u00eb", and a
    question naming Zoë would find nothing), so text holding an escape is decoded."""
    if not isinstance(value, str):
        return " ".join(map(str, value or []))
    if "\\u" not in value:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return " ".join(map(str, decoded)) if isinstance(decoded, list) else str(decoded)


def keys(entities, topics, stored: str | None = None) -> Set[str]:
    """The stems of the words of a memory's entities and topics (as the database hands
    them over), from its stored `recall_keys` when that was made of these very words by
    today's rules (stored_keys_of): hundreds of memories a question are new to _keys_of's
    cache at 100k, and splitting and stemming them was most of what the candidates' fetch
    spent on each."""
    joined = f"{json_words(entities)} {json_words(topics)}"
    if stored:
        try:
            length, crc, rules, listed = (stored.split(" ", 3) + [""])[:4]
            if (
                rules == _rules_text()
                and int(length) == len(joined)
                and int(crc) == zlib.crc32(joined.encode("utf-8", "surrogatepass"))
            ):
                return StoredKeys(listed)
        except ValueError:
            pass  # not a value stored_keys_of wrote (raw SQL): worked out
    return _keys_of(joined)


class StoredKeys(Set):
    """Keys as stored (space-separated, none with white space in it), read as a set
    without being made one: recall only asks which of the question's few stems are among
    them (`q.stems & keys`, `stem in keys`), and a set of a memory's keys cost more to make
    than the question's stems cost to look up in its line."""

    __slots__ = ("_line",)

    def __init__(self, listed: str = ""):
        self._line = f" {listed} " if listed else ""

    def __contains__(self, key) -> bool:
        return isinstance(key, str) and bool(key) and " " not in key and f" {key} " in self._line

    def __iter__(self):
        return iter(self._line.split())

    def __len__(self) -> int:
        return len(self._line.split())

    def __and__(self, other):
        # The question's few stems looked up in the line (Set's own would make a generator).
        line = self._line
        if not line:
            return frozenset()
        return frozenset([k for k in other if isinstance(k, str) and k and " " not in k and f" {k} " in line])

    __rand__ = __and__

    @classmethod
    def _from_iterable(cls, it):
        return frozenset(it)

    def __repr__(self) -> str:
        return f"StoredKeys({self._line.strip()!r})"


# What Memory.recall_keys stores: "<length> <CRC-32> <rules> <key> <key> ...", the length
# and CRC-32 of the words it was made of (entities and topics joined, as `keys` joins
# them), a figure of the rules that made it (key_rules), then the keys.


def stored_keys_of(entities, topics) -> str | None:
    """What Memory.recall_keys holds for entities and topics as the database hands them
    over (JSON text: recall/stored.py _as_read); None when a key cannot be listed."""
    joined = f"{json_words(entities)} {json_words(topics)}"
    found = sorted(_keys_of(joined))
    if any(not k or len(k.split()) != 1 or k.split()[0] != k for k in found):
        return None  # a key with white space in it (a compatibility form's) would not read back
    crc = zlib.crc32(joined.encode("utf-8", "surrogatepass"))
    return " ".join([str(len(joined)), str(crc), str(key_rules()), *found])


@lru_cache(maxsize=1)
def _rules_text() -> str:
    return str(key_rules())


@lru_cache(maxsize=1)
def key_rules() -> int:
    """The rules that make keys, as a figure: a CRC-32 of the code of the functions that
    make them (their bytecode and constants, recursively), the stopwords, the splitting
    pattern and the Unicode tables lower() and fold() read. A stored value made by other
    rules (older code, another Python) no longer matches and is not used."""
    parts = [
        _code_print(_keys_of.__wrapped__.__code__),
        _code_print(_key_of.__wrapped__.__code__),
        _code_print(getattr(stem, "__wrapped__", stem).__code__),
        _code_print(getattr(fold, "__wrapped__", fold).__code__),
        " ".join(sorted(STOPWORDS)),
        _SPLIT.pattern,
        unicodedata.unidata_version,
        sys.version,
    ]
    return zlib.crc32("\x1f".join(parts).encode("utf-8", "surrogatepass"))


def _code_print(code: CodeType) -> str:
    return f"{code.co_code.hex()}|{[_const_print(c) for c in code.co_consts]!r}|{code.co_names!r}"


def _const_print(value) -> str:
    # The same in every process: a set constant (`x in ("a", "b")` compiles to one) in a
    # sorted order, not in its hash order, which differs from process to process.
    if isinstance(value, CodeType):
        return _code_print(value)
    if isinstance(value, frozenset):
        return f"frozenset({sorted(map(_const_print, value))!r})"
    if isinstance(value, tuple):
        return f"({', '.join(map(_const_print, value))})"
    return repr(value)


def word_matcher(q_words: list[str]):
    """One regex for all question words: a word matches a text word that starts with its
    stem ("launch" finds "launched"), which is how the index matched it too."""
    if not q_words:
        return None
    stems = sorted({cached_stem(w) for w in q_words} | set(q_words), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(map(re.escape, stems)) + r")", re.I), q_words


def matched_words(memory, matcher) -> list[str]:
    if matcher is None:
        return []
    regex, q_words = matcher
    text = f"{memory.raw_text} {memory.summary} {' '.join(map(str, memory.entities))} {' '.join(map(str, memory.topics))}"
    found = {m.lower() for m in regex.findall(text)}
    return [w for w in q_words if w in found or cached_stem(w) in found][:6]
