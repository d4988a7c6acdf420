"""BM25 over the rows a search matched, with the owner's statistics alone (space_stats.py)."""

from __future__ import annotations

import math
import re

from .hits import Hit
from .space_stats import AVG_TOKEN_CHARS
from ..textutil import fold, stem


def idf_weights(df: dict[str, int], size: int) -> dict[str, float]:
    return {w: math.log(1.0 + (max(size, n) - n + 0.5) / (n + 0.5)) for w, n in df.items()}


# Matches ranked by full BM25 at most, on either database (by the coarse score, the rest
# are not relevant enough).
RERANK = 300

# BM25's usual constants (FTS5 uses the same).
BM25_K1 = 1.2
BM25_B = 0.75


def owner_bm25(rows, query: list[str], df: dict[str, int], *, size: int, mean_length: float) -> list[Hit]:
    """BM25 over rows (id, raw_text, summary, entities, topics, source) that matched, with
    document frequencies and lengths of the owner's memories only. A word counts in a
    column as often as a token there starts with its stem ("launch" counts "launched"),
    which is about what the index's stemmer matched."""
    stems = {w: stem(fold(w)) for w in query}
    idf = idf_weights(df, size)
    find = _starts_finder(set(stems.values()))
    hits = []
    mean_length = max(1.0, mean_length)
    for pk, raw_text, summary, entities, topics, source in rows:
        raw_text, summary = raw_text or "", summary or ""
        length = (len(raw_text) + len(summary)) / AVG_TOKEN_CHARS
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / mean_length)
        tf: dict[str, float] = {}
        # The text, and the key words (entities, topics) the index weighs too; an
        # extractive summary only repeats the text, so it is counted when it differs.
        columns = [(1.0, raw_text), (0.6, f"{_text(entities)} {_text(topics)}"), (0.2, source or "")]
        if summary and summary not in raw_text:
            columns.append((0.4, summary))
        for weight, text in columns:
            text = text.lower() if text.isascii() else fold(text)
            for found in find(text):
                tf[found] = tf.get(found, 0.0) + weight
        score = 0.0
        for w in query:
            f = tf.get(stems[w], 0.0)
            if f:
                score += idf[w] * f * (BM25_K1 + 1) / (f + norm)
        # The index matched it (its stemmer may reach forms ours does not): never zero.
        hits.append(Hit(memory_id=pk, score=score or 1e-6))
    hits.sort(key=lambda h: (-h.score, -h.memory_id))
    return hits


def _starts_finder(needles: set[str]):
    """A function that lists the needles found in a text where a word starts, once per
    place, the longest where several start at one place: what
    re.findall(r"(?<![^\\W_])(longest|...|shortest)", text) lists, in another order. BM25
    looks for its 2-5 stems in each column of 300 rows a search, twice a question; the
    regex tries its alternatives at every position of the text (2.5 of owner_bm25's 3.6 ms
    a search at 10k memories), str.find jumps to the few places a stem is. Stems of letters
    and digits only (a word's letters cannot start another word inside it, so the places
    found never overlap, as the regex's matches do not); any other (the fold of a
    vulgar fraction holds a fraction slash) is left to the regex."""
    ordered = sorted(needles, key=len, reverse=True)
    if not all(n.isalnum() for n in ordered):
        pattern = re.compile(r"(?<![^\W_])(" + "|".join(map(re.escape, ordered)) + r")")
        return pattern.findall
    # A place where a longer needle starts is the longer one's (the regex tries it first).
    longer = {n: tuple(m for m in ordered if len(m) > len(n) and m.startswith(n)) for n in ordered}

    def find(text: str) -> list[str]:
        found = []
        for n in ordered:
            at = text.find(n)
            while at >= 0:
                if (at == 0 or not text[at - 1].isalnum()) and not any(text.startswith(m, at) for m in longer[n]):
                    found.append(n)
                at = text.find(n, at + 1)
        return found

    return find


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(map(str, value))
