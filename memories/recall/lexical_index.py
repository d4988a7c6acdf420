"""The lexical index recall ranks with: its schema and lifecycle (install, uninstall, rebuild)
on SQLite (FTS5) and PostgreSQL (full-text search). How it is searched is search.py.

SQLite: a contentless FTS5 table kept in step by triggers on memories_memory, so every
code path that writes a memory (ORM save, bulk_create, queryset update, delete, cascade,
raw SQL) updates the index without the code having to remember to. Besides the text it
indexes one `scope` token per memory, "u<owner id>", present only while recall may read
the memory (ready or pending, not deleted, superseded or a near-duplicate), so the index alone can
say which of an owner's memories hold a word (see sqlite_search.py for when that is used).
PostgreSQL: a stored generated tsvector column with a GIN index; the database computes it
on every insert and update. The index only finds the matches: both databases rank them by
the same BM25 with the owner's own figures (bm25.py).
"""

from __future__ import annotations

from django.db import DatabaseError
from django.db import connection as default_connection

from .readable import readable_condition

FTS_TABLE = "memories_memory_fts"
# Per owner on SQLite, a random number the index's triggers draw afresh whenever a write
# changes what the index holds for one of the owner's memories: what the words arm
# remembers of an owner's index between questions (sqlite_search.py) is kept under it,
# so a write makes it unused. Random, not a count: a rolled-back write takes its change
# back, and a count would come back to a value a cached lookup of the rolled-back rows
# was kept under (evaluate rolls each conversation back; so do tests).
STAMPS_TABLE = "memories_memory_fts_stamps"
PG_COLUMN = "search_vector"
# Indexed text per memory on PostgreSQL: a tsvector is capped at 1 MB, and a memory whose
# text overflowed it would fail to save at all.
PG_MAX_CHARS = 200_000

# Column order matters: BM25_WEIGHTS follows it.
FTS_COLUMNS = ("raw_text", "summary", "entities", "topics", "source", "scope")
TEXT_COLUMNS = FTS_COLUMNS[:-1]
# raw text carries the facts; summary repeats the text's central sentences, so it counts
# less; entities and topics are the memory's key words; the source is mostly an id; the
# scope token only filters.
BM25_WEIGHTS = (1.0, 0.4, 0.6, 0.6, 0.2, 0.0)
# Columns whose change can change what the index holds for a memory.
_WATCHED = (
    "raw_text",
    "summary",
    "entities",
    "topics",
    "source",
    "owner_id",
    "status",
    "deleted_at",
    "superseded_by_id",
    "duplicate_of_id",
)


def _scope_sql(row: str, columns: set[str]) -> str:
    """SQL for a memory's scope token: its owner while recall may read it, else nothing.
    Built from the columns the table has, so it also works at the migration that made the
    index (before the soft-delete columns existed)."""
    return f"CASE WHEN {readable_condition(row, columns)} THEN 'u' || {row}.owner_id ELSE '' END"


def _values(row: str, columns: set[str]) -> str:
    return ", ".join([f"{row}.{c}" for c in TEXT_COLUMNS] + [_scope_sql(row, columns)])


def _sqlite_columns(cursor, table: str) -> set[str]:
    cursor.execute(f"PRAGMA table_info({table})")
    return {row[1] for row in cursor.fetchall()}


def _sqlite_install(cursor) -> bool:
    """Create the table and (re)create its triggers; True when the table is new."""
    columns = _sqlite_columns(cursor, "memories_memory")
    have = _sqlite_columns(cursor, FTS_TABLE)
    created = False
    if have and set(FTS_COLUMNS) != have:
        # An index of an older layout (external content, no scope): replace it.
        _sqlite_uninstall(cursor)
        have = set()
    if not have:
        cursor.execute(
            f"""CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
                {", ".join(FTS_COLUMNS)}, content='', tokenize='porter unicode61 remove_diacritics 2'
            )"""
        )
        created = True
    cols = ", ".join(FTS_COLUMNS)
    watched = ", ".join(c for c in _WATCHED if c in columns)
    # Dropped and made again every time: a trigger made before a column existed must learn
    # about it, and a migration that rebuilt memories_memory has dropped them anyway.
    for suffix in ("ai", "ad", "au"):
        cursor.execute(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{suffix}")
    cursor.execute(f"CREATE TABLE IF NOT EXISTS {STAMPS_TABLE} (owner_id INTEGER NOT NULL PRIMARY KEY, stamp INTEGER NOT NULL)")
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_ai AFTER INSERT ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES (new.id, {_values("new", columns)});
            {_restamp("new")}
        END"""
    )
    # A contentless table forgets a row only when told exactly what it indexed for it.
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_ad AFTER DELETE ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', old.id, {_values("old", columns)});
            {_restamp("old")}
        END"""
    )
    cursor.execute(
        f"""CREATE TRIGGER {FTS_TABLE}_au AFTER UPDATE OF {watched} ON memories_memory BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, {cols}) VALUES ('delete', old.id, {_values("old", columns)});
            INSERT INTO {FTS_TABLE}(rowid, {cols}) VALUES (new.id, {_values("new", columns)});
            {_restamp("old")}
            {_restamp("new")}
        END"""
    )
    _restamp_all(cursor)
    return created


def _restamp(row: str) -> str:
    return (
        f"INSERT INTO {STAMPS_TABLE}(owner_id, stamp) VALUES ({row}.owner_id, random()) "
        "ON CONFLICT(owner_id) DO UPDATE SET stamp = excluded.stamp;"
    )


def _restamp_all(cursor) -> None:
    """Every owner's stamp drawn afresh (the triggers made again, the index rebuilt: what
    was remembered of it is not used again)."""
    cursor.execute(
        f"INSERT INTO {STAMPS_TABLE}(owner_id, stamp) SELECT DISTINCT owner_id, random() FROM memories_memory WHERE true "
        "ON CONFLICT(owner_id) DO UPDATE SET stamp = excluded.stamp"
    )


def owner_stamp(cursor, owner_id: int) -> int | None:
    """The owner's stamp (STAMPS_TABLE); None while the index's triggers draw none (an index
    made by code from before the stamps) or the owner has none yet: then nothing may be
    remembered. A write straight into the index, past the triggers, draws none either:
    `rebuild` (what repairs an index) draws every owner's afresh."""
    try:
        cursor.execute(
            f"SELECT stamp FROM {STAMPS_TABLE} WHERE owner_id = %s AND EXISTS (SELECT 1 FROM sqlite_master "
            f"WHERE type = 'trigger' AND name = '{FTS_TABLE}_au' AND sql LIKE '%%{STAMPS_TABLE}%%')",
            [owner_id],
        )
    except DatabaseError:  # code newer than the last migrate (which makes the table)
        return None
    row = cursor.fetchone()
    return row[0] if row else None


def _sqlite_uninstall(cursor) -> None:
    for suffix in ("ai", "ad", "au"):
        cursor.execute(f"DROP TRIGGER IF EXISTS {FTS_TABLE}_{suffix}")
    cursor.execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")
    cursor.execute(f"DROP TABLE IF EXISTS {STAMPS_TABLE}")


REBUILD_CHUNK = 5000


def _sqlite_rebuild(cursor, progress=None) -> None:
    columns = _sqlite_columns(cursor, "memories_memory")
    cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('delete-all')")
    cursor.execute("SELECT coalesce(max(id), 0) FROM memories_memory")
    highest = cursor.fetchone()[0]
    # In id ranges, so a progress bar can follow a rebuild of 100,000 memories.
    for start in range(0, highest, REBUILD_CHUNK):
        cursor.execute(
            f"INSERT INTO {FTS_TABLE}(rowid, {', '.join(FTS_COLUMNS)}) SELECT m.id, {_values('m', columns)} "
            "FROM memories_memory m WHERE m.id > %s AND m.id <= %s",
            [start, start + REBUILD_CHUNK],
        )
        if progress is not None:
            progress(max(cursor.rowcount, 0))
    _restamp_all(cursor)


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
    memories_memory: on SQLite, Django re-creates a table to alter it, which drops its
    triggers. A new (or replaced) SQLite index is filled from the table at once."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            if _sqlite_install(cursor):
                _sqlite_rebuild(cursor)
        elif connection.vendor == "postgresql":
            if _pg_installed(cursor):
                # ALTER TABLE, even a no-op one, fails inside a transaction with pending
                # deferred constraint checks; an installed index needs nothing.
                return
            for sql in _PG_SETUP:
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
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            _sqlite_uninstall(cursor)
        elif connection.vendor == "postgresql":
            for sql in _PG_TEARDOWN:
                cursor.execute(sql)


def rebuild(connection=None, *, progress=None) -> None:
    """Re-create the index from the memories table (after a restore, or to repair it).
    progress(n), when given, is called as each n memories are indexed."""
    connection = connection or default_connection
    install(connection)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            _sqlite_rebuild(cursor, progress)
        elif connection.vendor == "postgresql":
            cursor.execute("REINDEX INDEX memories_memory_search_gin")
            if progress is not None:
                cursor.execute("SELECT count(*) FROM memories_memory")
                progress(cursor.fetchone()[0])
