"""The owner's own figures lexical ranking weighs by (how many readable memories, their mean
length), counted with plain SQL and remembered a few minutes: another space never moves
one owner's ranking."""

from __future__ import annotations

from django.core.cache import cache

from .readable import READABLE_SQL

# A store size for IDF is counted up to this many memories, and kept this long.
PG_IDF_CAP = 50_000
PG_SIZE_SECONDS = 300
AVG_TOKEN_CHARS = 5.0


def newest_id(connection, owner_id: int) -> tuple | None:
    """The owner's newest memory, as (id, when it was made): its time too, as a space made
    again under reused ids (a rolled-back one: evaluate's, a test's) can end at the same id."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, created_at FROM memories_memory WHERE owner_id = %s ORDER BY id DESC LIMIT 1", [owner_id])
        row = cursor.fetchone()
    return tuple(row) if row else None


def owner_stats(connection, owner_id: int, newest: tuple | None) -> tuple[int, float]:
    """How many readable memories the owner has (up to PG_IDF_CAP) and their mean length
    in tokens (text and summary), remembered for a few minutes: figures a little out of
    date move the ranking by a hair. Keyed by the owner's newest memory (`newest`,
    newest_id) too: a new memory (or a space made again under a reused id, as evaluate's
    rolled-back spaces are) is never read with another store's figures."""
    key = f"memories:search:stats:{owner_id}:{':'.join(str(part).replace(' ', 'T') for part in newest or ())}"
    stats = cache.get(key)
    if stats is None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*), avg(length(raw_text) + length(summary)) FROM (SELECT raw_text, summary FROM memories_memory "
                f"WHERE {READABLE_SQL} ORDER BY id DESC LIMIT %s) AS mine",
                [owner_id, PG_IDF_CAP],
            )
            count, mean_chars = cursor.fetchone()
        stats = (int(count or 0), float(mean_chars or 0.0) / AVG_TOKEN_CHARS)
        cache.set(key, stats, PG_SIZE_SECONDS)
    return stats
