"""The lexical search recall ranks with: the owner's readable memories that hold a
question's words, best first, by the path the database offers: FTS5 with BM25 on SQLite
(sqlite_search.py), full-text search on PostgreSQL (postgres_search.py), a scan elsewhere; Chinese
and Japanese terms, which neither index can cut out of a run of text, by substring. The
index itself is lexical_index.py; the question's words, lexical_query.py.
"""

from __future__ import annotations

from django.db import connection as default_connection

from .sqlite_search import fts5_search
from .hits import Hit
from .postgres_search import pg_search
from .readable import READABLE_SQL, readable_memories
from ..textutil import has_cjk, words

# Migrations 0002, 0006 and 0007 make and fill the index by these names.
from .lexical_index import install, rebuild, uninstall  # noqa: F401


def lexical_search(*, owner, query: list[str], limit: int, connection=None, read: dict | None = None) -> list[Hit]:
    """The owner's readable memories that match any query word, best first. read: where
    the rows ranked are put, by id, when the path reads them (sqlite_search.READ_COLUMNS)."""
    connection = connection or default_connection
    spaced = [w for w in query if not has_cjk(w)]
    unspaced = [w for w in query if has_cjk(w)]
    hits: list[Hit] = []
    if not spaced:
        pass
    elif connection.vendor == "sqlite":
        hits = fts5_search(owner.pk, spaced, limit, connection, read)
    elif connection.vendor == "postgresql":
        hits = pg_search(owner.pk, spaced, limit, connection)
    else:
        hits = _scan_search(owner=owner, query=spaced, limit=limit)
    if unspaced:
        hits = _merge(hits, _substring_search(owner.pk, unspaced, limit, connection), limit)
    return hits


def _merge(hits: list[Hit], more: list[Hit], limit: int) -> list[Hit]:
    """Substring finds join the index's, each found term counting as much as the index's
    best match does."""
    unit = max((h.score for h in hits), default=1.0) or 1.0
    scores = {h.memory_id: h.score for h in hits}
    for h in more:
        scores[h.memory_id] = scores.get(h.memory_id, 0.0) + h.score * unit
    return [Hit(pk, score) for pk, score in sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:limit]]


# Memories a substring search reads at most, newest first.
SUBSTRING_SCAN = 20_000


def _substring_search(owner_id: int, terms: list[str], limit: int, connection) -> list[Hit]:
    """Chinese and Japanese terms, which neither index can cut out of a run of text: the
    owner's readable memories whose text or summary holds them, by how many (longer
    terms count more). A scan of the owner's newest memories, bounded."""
    terms = terms[:8]
    like = " OR ".join(["raw_text LIKE %s OR summary LIKE %s"] * len(terms))
    params = [p for t in terms for p in (f"%{t}%", f"%{t}%")]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, raw_text, summary FROM (SELECT id, raw_text, summary FROM memories_memory WHERE {READABLE_SQL} "
            f"ORDER BY id DESC LIMIT %s) AS recent WHERE {like}",
            [owner_id, SUBSTRING_SCAN, *params],
        )
        rows = cursor.fetchall()
    weight = sum(min(len(t), 4) for t in terms)
    hits = []
    for pk, raw_text, summary in rows:
        text = f"{raw_text} {summary}"
        found = sum(min(len(t), 4) for t in terms if t in text)
        if found:
            hits.append(Hit(pk, found / weight))
    hits.sort(key=lambda h: (-h.score, -h.memory_id))
    return hits[:limit]


def _scan_search(*, owner, query: list[str], limit: int) -> list[Hit]:
    """Other databases: count matching words over the newest memories. Slow and rough,
    but recall still works."""
    wanted = set(query)
    hits = []
    rows = readable_memories(owner).order_by("-id").values_list("id", "raw_text", "summary")[:5000]
    for pk, raw_text, summary in rows:
        found = wanted & set(words(f"{raw_text} {summary}"))
        if found:
            hits.append(Hit(pk, float(len(found))))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]
