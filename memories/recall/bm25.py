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
    pattern = re.compile(r"(?<![^\W_])(" + "|".join(sorted(map(re.escape, set(stems.values())), key=len, reverse=True)) + r")")
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
            for found in pattern.findall(text):
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


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(map(str, value))
