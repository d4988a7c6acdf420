"""What a lexical search answers (search.py and the paths it picks from)."""

from __future__ import annotations

from dataclasses import dataclass

# bm25 is computed for every row a query matches: at most this many (see sqlite_search.py),
# a few milliseconds of ranking at any store size.
MAX_MATCHES = 2000


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float  # higher is more relevant; only comparable within one search
