"""The word handling recall repeats for every candidate, cached: stems, key words of
entities and topics, and the question words a memory holds (for its reasons)."""

from __future__ import annotations

import re
from functools import lru_cache

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
    # Raw SQL hands JSON over as text on SQLite and as lists on PostgreSQL; the words
    # are what count, so either form will do.
    return value if isinstance(value, str) else " ".join(map(str, value or []))


def keys(entities, topics) -> frozenset[str]:
    return _keys_of(f"{json_words(entities)} {json_words(topics)}")


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
