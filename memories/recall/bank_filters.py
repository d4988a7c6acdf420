"""The memory bank's filters (services/browse.py): ids of memories whose columns hold some
words, from the lexical index; any owner and state, narrowed by the caller."""

from __future__ import annotations

from django.db import connection as default_connection
from django.db.models.expressions import RawSQL

from .lexical_index import FTS_TABLE, PG_COLUMN
from .lexical_query import fts5_phrase


def candidate_ids(
    columns: tuple[str, ...], words: list[str], *, phrase: bool, limit: int, within: list[int] | None = None
) -> list[int] | None:
    """Ids of memories (any owner, any state) whose columns hold the words (all of them,
    or as one phrase), from the index; None when there are more than `limit` or
    no index to ask (another database). `within` (ids another filter found) narrows it."""
    # Ids are ints from the database, written into the SQL as such.
    narrow = f" AND {{id}} IN ({', '.join(str(int(pk)) for pk in within)})" if within else ""
    if within is not None and not within:
        return []
    if default_connection.vendor == "sqlite":
        terms = fts5_phrase(words) if phrase else " AND ".join(fts5_phrase([w]) for w in words)
        sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s{narrow.format(id='rowid')} LIMIT %s"
        params = [f"{{{' '.join(columns)}}} : ({terms})", limit + 1]
    elif default_connection.vendor == "postgresql":
        # The tsvector holds every text column; plainto/phraseto parse the words safely.
        function = "phraseto_tsquery" if phrase else "plainto_tsquery"
        sql = f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ {function}('english', %s){narrow.format(id='id')} LIMIT %s"
        params = [" ".join(words), limit + 1]
    else:
        return None
    with default_connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    return ids if len(ids) <= limit else None


def matching_ids(columns: tuple[str, ...], words: list[str]) -> RawSQL | None:
    """The same match as candidate_ids (every word), unbounded, as a subquery the list
    filters by; None with no index to ask."""
    if default_connection.vendor == "sqlite":
        match = f"{{{' '.join(columns)}}} : ({' AND '.join(fts5_phrase([w]) for w in words)})"
        return RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [match])
    if default_connection.vendor == "postgresql":
        return RawSQL(f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ plainto_tsquery('english', %s)", [" ".join(words)])
    return None
