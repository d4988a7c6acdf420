"""Where vectors are kept: the MemoryVector table, and on PostgreSQL with pgvector a
`halfvec` copy of each vector that the database itself searches (embeddings/pgvector.py).

Hidden memories keep no vector. A memory deleted, superseded or found a near-duplicate
loses its vector at that moment, by a trigger in the database (as the full-text index's
scope token follows the same columns: recall/lexical_index.py), so every code path that hides a memory
(ORM save, queryset update, raw SQL) is covered without having to remember to, and a
vector computed for a memory hidden meanwhile is not stored. What hidden memories held
must not move how visible ones rank: the meaning arm's "typical memory" (embeddings/
hubness.py) is the mean of the owner's vectors, and a long-lived space would otherwise
rank differently from a fresh import of the same visible memories. A memory restored
gets its vector again from the embedding queue (services/embed.py), like any memory
without one.
"""

from __future__ import annotations

import time

import numpy as np
from django.db import DatabaseError
from django.db import connection as default_connection
from django.db import transaction

from ..models import Memory, MemoryTerms, MemoryVector

VECTOR_TABLE = MemoryVector._meta.db_table
TERMS_TABLE = MemoryTerms._meta.db_table
MEMORY_TABLE = Memory._meta.db_table
HIDING_COLUMNS = ("deleted_at", "superseded_by_id", "duplicate_of_id")
_HIDDEN = " OR ".join(f"{{row}}.{c} IS NOT NULL" for c in HIDING_COLUMNS)


def hidden_condition(row: str) -> str:
    """SQL true while the memory in `row` is hidden from recall for good (not a status
    that passes: a pending or failed memory keeps the vector it may have)."""
    return _HIDDEN.format(row=row)


def _sqlite_columns(cursor) -> set[str]:
    cursor.execute(f"PRAGMA table_info({MEMORY_TABLE})")
    return {row[1] for row in cursor.fetchall()}


def install(connection=None) -> None:
    """(Re)create the triggers that keep hidden memories without vectors or latent
    terms; idempotent.
    Run by migration 0013 and after every migrate (on SQLite a migration that rebuilds
    the memory table drops its triggers)."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite" and not set(HIDING_COLUMNS) <= _sqlite_columns(cursor):
            return
        # The vectors and the latent terms (embeddings/terms.py) follow the same rule
        # (run by migration 0013 too, before the terms' table exists).
        tables = set(connection.introspection.table_names(cursor))
        for table, name in ((VECTOR_TABLE, "vector"), (TERMS_TABLE, "terms")):
            if table in tables:
                _install_for(cursor, connection.vendor, table, name)
        if connection.vendor == "sqlite":
            _install_counts(
                cursor, [(table, name) for table, name in ((VECTOR_TABLE, "vector"), (TERMS_TABLE, "terms")) if table in tables]
            )


# How many vectors (and latent terms) each owner has, kept by triggers on SQLite. The
# in-process caches (embeddings/index.py, terms_index.py) compare it before every search
# to notice a row removed; counted with count(*) it was a walk of the owner's index, 5 ms
# for the vectors and 11 for the terms at 100k memories (more on a loaded machine), paid
# every RECOUNT_SECONDS, so by every question of someone who asks less often than that.
COUNTS_TABLE = "memories_owner_rows"


def _install_counts(cursor, tables: list[tuple[str, str]]) -> None:
    """The counts' table, its triggers, and the counts made afresh (idempotent: run after
    every migrate, when a rebuilt table may have lost its triggers)."""
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {COUNTS_TABLE} (kind TEXT NOT NULL, owner_id INTEGER NOT NULL, "
        "n INTEGER NOT NULL, PRIMARY KEY (kind, owner_id)) WITHOUT ROWID"
    )
    for table, kind in tables:
        for suffix in ("counted", "uncounted", "moved"):
            cursor.execute(f"DROP TRIGGER IF EXISTS memories_{kind}_{suffix}")
        cursor.execute(
            f"""CREATE TRIGGER memories_{kind}_counted AFTER INSERT ON {table} BEGIN
                INSERT INTO {COUNTS_TABLE} (kind, owner_id, n) VALUES ('{kind}', new.owner_id, 1)
                ON CONFLICT (kind, owner_id) DO UPDATE SET n = n + 1;
            END"""
        )
        cursor.execute(
            f"""CREATE TRIGGER memories_{kind}_uncounted AFTER DELETE ON {table} BEGIN
                UPDATE {COUNTS_TABLE} SET n = n - 1 WHERE kind = '{kind}' AND owner_id = old.owner_id;
            END"""
        )
        cursor.execute(
            f"""CREATE TRIGGER memories_{kind}_moved AFTER UPDATE OF owner_id ON {table} BEGIN
                UPDATE {COUNTS_TABLE} SET n = n - 1 WHERE kind = '{kind}' AND owner_id = old.owner_id;
                INSERT INTO {COUNTS_TABLE} (kind, owner_id, n) VALUES ('{kind}', new.owner_id, 1)
                ON CONFLICT (kind, owner_id) DO UPDATE SET n = n + 1;
            END"""
        )
        cursor.execute(f"DELETE FROM {COUNTS_TABLE} WHERE kind = %s", [kind])
        cursor.execute(
            f"INSERT INTO {COUNTS_TABLE} (kind, owner_id, n) SELECT %s, owner_id, count(*) FROM {table} GROUP BY owner_id",
            [kind],
        )


def owner_rows(cursor, vendor: str, kind: str, owner_id: int) -> int:
    """How many rows of `kind` ("vector" or "terms": every model's) the owner has: from the
    trigger-kept count on SQLite, counted on PostgreSQL (an index-only scan there)."""
    if vendor == "sqlite":
        try:
            cursor.execute(f"SELECT n FROM {COUNTS_TABLE} WHERE kind = %s AND owner_id = %s", [kind, owner_id])
        except DatabaseError:  # code newer than the last migrate (which makes the table): counted
            pass
        else:
            row = cursor.fetchone()
            return row[0] if row else 0
    cursor.execute(f"SELECT count(*) FROM {VECTOR_TABLE if kind == 'vector' else TERMS_TABLE} WHERE owner_id = %s", [owner_id])
    return cursor.fetchone()[0]


def owner_stamp(kind: str, owner_id: int, model: str, cached, *, recount_seconds: float) -> tuple[tuple, bool]:
    """(database, how many rows of `kind` ("vector" or "terms") the owner has, the newest
    one's time as the database hands it over): what an in-process cache of the owner's
    rows (embeddings/index.py, terms_index.py) checks itself against before every search.
    The newest time is one seek in the owner-and-model index, read every time; the count
    (over the owner's index: all models, its entries a fraction of the size of the
    owner-and-model index's; on SQLite a count triggers keep, owner_rows) is read when that
    time moved or the cached one (`cached.stamp`, `cached.counted_at`) is older than
    `recount_seconds`. Also says whether the count was read."""
    table = VECTOR_TABLE if kind == "vector" else TERMS_TABLE
    with default_connection.cursor() as cursor:
        cursor.execute(f"SELECT max(embedded_at) FROM {table} WHERE owner_id = %s AND model = %s", [owner_id, model])
        newest = cursor.fetchone()[0]
        if (
            cached is not None
            and default_connection.vendor != "sqlite"  # where the count is kept by triggers: read every time
            and cached.stamp[0] == default_connection.alias
            and cached.stamp[2] == newest
            and time.monotonic() - cached.counted_at < recount_seconds
        ):
            return cached.stamp, False
        count = owner_rows(cursor, default_connection.vendor, kind, owner_id)
    return (default_connection.alias, count, newest), True


def uninstall_terms(connection=None) -> None:
    """Drop the latent terms' triggers (migration 0016 undone): the one on the memory table
    names the terms' table, and on SQLite any later change to the schema (even a column
    dropped elsewhere) fails while a trigger names a table that is gone."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("DROP TRIGGER IF EXISTS memories_terms_hidden")
            cursor.execute("DROP TRIGGER IF EXISTS memories_terms_of_hidden")
        elif connection.vendor == "postgresql":
            cursor.execute(f"DROP TRIGGER IF EXISTS memories_terms_hidden ON {MEMORY_TABLE}")
            cursor.execute("DROP FUNCTION IF EXISTS memories_terms_hidden() CASCADE")
            cursor.execute("DROP FUNCTION IF EXISTS memories_terms_of_hidden() CASCADE")


def _install_for(cursor, vendor: str, table: str, name: str) -> None:
    hidden, of_hidden = f"memories_{name}_hidden", f"memories_{name}_of_hidden"
    if vendor == "sqlite":
        cursor.execute(f"DROP TRIGGER IF EXISTS {hidden}")
        cursor.execute(f"DROP TRIGGER IF EXISTS {of_hidden}")
        cursor.execute(
            f"""CREATE TRIGGER {hidden} AFTER UPDATE OF {", ".join(HIDING_COLUMNS)} ON {MEMORY_TABLE}
            WHEN {hidden_condition("new")} BEGIN
                DELETE FROM {table} WHERE memory_id = new.id;
            END"""
        )
        cursor.execute(
            f"""CREATE TRIGGER {of_hidden} BEFORE INSERT ON {table}
            WHEN EXISTS (SELECT 1 FROM {MEMORY_TABLE} m WHERE m.id = new.memory_id AND ({hidden_condition("m")}))
            BEGIN SELECT RAISE(IGNORE); END"""
        )
    elif vendor == "postgresql":
        cursor.execute(
            f"""CREATE OR REPLACE FUNCTION {hidden}() RETURNS trigger AS $$
            BEGIN DELETE FROM {table} WHERE memory_id = NEW.id; RETURN NULL; END
            $$ LANGUAGE plpgsql"""
        )
        cursor.execute(f"DROP TRIGGER IF EXISTS {hidden} ON {MEMORY_TABLE}")
        cursor.execute(
            f"""CREATE TRIGGER {hidden} AFTER UPDATE OF {", ".join(HIDING_COLUMNS)} ON {MEMORY_TABLE}
            FOR EACH ROW WHEN ({hidden_condition("NEW")}) EXECUTE FUNCTION {hidden}()"""
        )
        cursor.execute(
            f"""CREATE OR REPLACE FUNCTION {of_hidden}() RETURNS trigger AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM {MEMORY_TABLE} m WHERE m.id = NEW.memory_id AND ({hidden_condition("m")})) THEN
                    RETURN NULL;
                END IF;
                RETURN NEW;
            END
            $$ LANGUAGE plpgsql"""
        )
        cursor.execute(f"DROP TRIGGER IF EXISTS {of_hidden} ON {table}")
        cursor.execute(
            f"""CREATE TRIGGER {of_hidden} BEFORE INSERT ON {table}
            FOR EACH ROW EXECUTE FUNCTION {of_hidden}()"""
        )


def drop_hidden(connection=None) -> int:
    """Remove the vectors hidden memories still hold (those stored before the triggers)."""
    connection = connection or default_connection
    with connection.cursor() as cursor:
        dropped = 0
        tables = set(connection.introspection.table_names(cursor))
        for table in (t for t in (VECTOR_TABLE, TERMS_TABLE) if t in tables):
            cursor.execute(
                f"DELETE FROM {table} WHERE memory_id IN (SELECT m.id FROM {MEMORY_TABLE} m WHERE {hidden_condition('m')})"
            )
            dropped += max(cursor.rowcount, 0)
        return dropped


def save(rows: list[tuple[int, int, np.ndarray, str]], *, model: str, dim: int, terms=None) -> None:
    """Store (memory id, owner id, unit vector, text hash) rows of one model, replacing each
    memory's vector, in one short transaction (the caller computed them outside any). A
    memory purged meanwhile is skipped; one hidden meanwhile is skipped by the trigger.
    terms: each row's latent terms (embeddings/terms.py), stored beside its vector."""
    from . import pgvector
    from . import terms as latent

    if not rows:
        return
    objects = [
        MemoryVector(memory_id=pk, owner_id=owner_id, model=model, dim=dim, vector=np.asarray(v, "<f4").tobytes(), text_hash=h)
        for pk, owner_id, v, h in rows
    ]
    on_pgvector = pgvector.enabled()
    if on_pgvector:
        pgvector.ensure_index(dim)  # before the write's transaction: an index of a new dimension
    with transaction.atomic():
        # One vector per memory: the new model's replaces the old one.
        MemoryVector.objects.filter(memory_id__in=[pk for pk, *_ in rows]).delete()
        present = set(Memory.all_objects.filter(pk__in=[pk for pk, *_ in rows]).values_list("pk", flat=True))
        MemoryVector.objects.bulk_create([o for o in objects if o.memory_id in present])
        if terms is not None:
            MemoryTerms.objects.filter(memory_id__in=[pk for pk, *_ in rows]).delete()
            MemoryTerms.objects.bulk_create(
                [
                    MemoryTerms(memory_id=pk, owner_id=owner_id, model=latent.MODEL, terms=latent.encode(t), text_hash=h)
                    for (pk, owner_id, _, h), t in zip(rows, terms, strict=True)
                    if pk in present
                ]
            )
        if on_pgvector:
            pgvector.write([(pk, v) for pk, _, v, _ in rows if pk in present], dim=dim)
