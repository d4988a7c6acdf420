"""The lexical index recall ranks with: SQLite FTS5 (bm25) or PostgreSQL full-text search.

SQLite: an external-content FTS5 table over memories_memory, kept in step by triggers, so
every code path that writes a memory (ORM save, bulk_create, queryset update, delete,
cascade, raw SQL) updates the index without the code having to remember to.
PostgreSQL: a stored generated tsvector column with a GIN index; the database computes it
on every insert and update.

A question is never passed to MATCH or to_tsquery as typed: it is cut into plain
alphanumeric words, stopwords dropped, and each word quoted (FTS5) or joined with `|`
(tsquery), so FTS syntax in a question is just text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection as default_connection

from .textutil import STOPWORDS, words

FTS_TABLE = "memories_memory_fts"
PG_COLUMN = "search_vector"
# The most words of a question sent to the index: a pasted essay must not become a
# thousand-term OR that matches everything.
MAX_QUERY_WORDS = 32
# Indexed text per memory on PostgreSQL: a tsvector is capped at 1 MB, and a memory whose
# text overflowed it would fail to save at all.
PG_MAX_CHARS = 200_000

# Column order matters: BM25_WEIGHTS follows it.
FTS_COLUMNS = ("raw_text", "summary", "entities", "topics", "source")
# raw text carries the facts; summary repeats the text's central sentences, so it counts
# less; entities and topics are the memory's key words; the source is mostly an id.
BM25_WEIGHTS = (1.0, 0.4, 0.6, 0.6, 0.2)

_SQLITE_SETUP = [
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5(
        {", ".join(FTS_COLUMNS)},
        content='memories_memory', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    f"""CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ai AFTER INSERT ON memories_memory BEGIN
        INSERT INTO {FTS_TABLE}(rowid, {", ".join(FTS_COLUMNS)})
        VALUES (new.id, {", ".join("new." + c for c in FTS_COLUMNS)});
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_ad AFTER DELETE ON memories_memory BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {", ".join(FTS_COLUMNS)})
        VALUES ('delete', old.id, {", ".join("old." + c for c in FTS_COLUMNS)});
    END""",
    # Only edits of indexed columns touch the index: status flips and consolidation marks
    # are frequent and change nothing it holds.
    f"""CREATE TRIGGER IF NOT EXISTS {FTS_TABLE}_au AFTER UPDATE OF {", ".join(FTS_COLUMNS)} ON memories_memory BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {", ".join(FTS_COLUMNS)})
        VALUES ('delete', old.id, {", ".join("old." + c for c in FTS_COLUMNS)});
        INSERT INTO {FTS_TABLE}(rowid, {", ".join(FTS_COLUMNS)})
        VALUES (new.id, {", ".join("new." + c for c in FTS_COLUMNS)});
    END""",
]
_SQLITE_TEARDOWN = [
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_ai",
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_ad",
    f"DROP TRIGGER IF EXISTS {FTS_TABLE}_au",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]

PG_VECTOR = (
    "setweight(to_tsvector('english'::regconfig, left(coalesce(raw_text, ''), {n})), 'A') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(entities::text, '') || ' ' || coalesce(topics::text, '')), 'B') || "
    "setweight(to_tsvector('english'::regconfig, left(coalesce(summary, ''), {n})), 'C') || "
    "setweight(to_tsvector('english'::regconfig, coalesce(source, '')), 'D')"
).format(n=PG_MAX_CHARS)
_PG_SETUP = [
    f"ALTER TABLE memories_memory ADD COLUMN IF NOT EXISTS {PG_COLUMN} tsvector GENERATED ALWAYS AS ({PG_VECTOR}) STORED",
    f"CREATE INDEX IF NOT EXISTS memories_memory_search_gin ON memories_memory USING gin ({PG_COLUMN})",
]
_PG_TEARDOWN = [
    "DROP INDEX IF EXISTS memories_memory_search_gin",
    f"ALTER TABLE memories_memory DROP COLUMN IF EXISTS {PG_COLUMN}",
]


def install(connection=None) -> None:
    """Create the index (idempotent). Safe to run again after a migration that rebuilt
    memories_memory: on SQLite, Django re-creates a table to alter it, which drops its triggers."""
    connection = connection or default_connection
    statements = {"sqlite": _SQLITE_SETUP, "postgresql": _PG_SETUP}.get(connection.vendor, [])
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and _pg_installed(cursor):
            # ALTER TABLE, even a no-op one, fails inside a transaction with pending
            # deferred constraint checks; an installed index needs nothing.
            return
        for sql in statements:
            cursor.execute(sql)


def _pg_installed(cursor) -> bool:
    cursor.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'memories_memory' AND column_name = %s "
        "UNION ALL SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'memories_memory_search_gin'",
        [PG_COLUMN],
    )
    return len(cursor.fetchall()) == 2


def uninstall(connection=None) -> None:
    connection = connection or default_connection
    statements = {"sqlite": _SQLITE_TEARDOWN, "postgresql": _PG_TEARDOWN}.get(connection.vendor, [])
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def rebuild(connection=None) -> None:
    """Re-create the index from the memories table (after a restore, or to repair it)."""
    connection = connection or default_connection
    install(connection)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
        elif connection.vendor == "postgresql":
            cursor.execute("REINDEX INDEX memories_memory_search_gin")


_PLAIN = re.compile(r"[^a-z0-9]+")


def query_words(text: str) -> list[str]:
    """The words of a question worth searching for: lower-case, alphanumeric only
    (everything FTS could read as syntax is gone), no stopwords, each once."""
    out: dict[str, None] = {}
    for word in words(text or ""):
        if word in STOPWORDS:
            continue
        for piece in _PLAIN.split(word.lower()):
            if piece and piece not in STOPWORDS and (len(piece) > 1 or piece.isdigit()):
                out.setdefault(piece, None)
    return list(out)[:MAX_QUERY_WORDS]


def fts5_match(query: list[str]) -> str:
    # Each word quoted: an FTS5 string, never an operator, column filter or prefix query.
    return " OR ".join(f'"{w}"' for w in query)


def tsquery(query: list[str]) -> str:
    return " | ".join(query)


@dataclass(frozen=True)
class Hit:
    memory_id: int
    score: float  # higher is more relevant; only comparable within one search


def lexical_search(*, owner, query: list[str], limit: int, connection=None) -> list[Hit]:
    """The owner's ready memories that match any query word, best first."""
    connection = connection or default_connection
    if not query:
        return []
    if connection.vendor == "sqlite":
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        sql = (
            f"SELECT m.id, bm25({FTS_TABLE}, {weights}) AS rank FROM {FTS_TABLE} "
            f"JOIN memories_memory m ON m.id = {FTS_TABLE}.rowid "
            f"WHERE {FTS_TABLE} MATCH %s AND m.owner_id = %s AND m.status = 'ready' "
            "ORDER BY rank LIMIT %s"
        )
        params = [fts5_match(query), owner.pk, limit]
        # bm25() is lower-is-better; flip it so every backend returns higher-is-better.
        flip = -1.0
    elif connection.vendor == "postgresql":
        # ts_rank normalisation 1: divide by 1 + log(length), so long texts do not win by size.
        sql = (
            f"SELECT id, ts_rank('{{0.1, 0.3, 0.6, 1.0}}', {PG_COLUMN}, q, 1) AS rank "
            f"FROM memories_memory, to_tsquery('english', %s) q "
            f"WHERE {PG_COLUMN} @@ q AND owner_id = %s AND status = 'ready' "
            "ORDER BY rank DESC, id DESC LIMIT %s"
        )
        params = [tsquery(query), owner.pk, limit]
        flip = 1.0
    else:
        return _scan_search(owner=owner, query=query, limit=limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [Hit(memory_id=row[0], score=flip * float(row[1])) for row in rows]


def _scan_search(*, owner, query: list[str], limit: int) -> list[Hit]:
    """Other databases: count matching words over the newest memories. Slow and rough,
    but recall still works."""
    from .models import Memory

    wanted = set(query)
    hits = []
    rows = Memory.objects.filter(owner=owner, status=Memory.Status.READY).order_by("-id").values_list("id", "raw_text", "summary")[:5000]
    for pk, raw_text, summary in rows:
        found = wanted & set(words(f"{raw_text} {summary}"))
        if found:
            hits.append(Hit(pk, float(len(found))))
    hits.sort(key=lambda h: -h.score)
    return hits[:limit]
