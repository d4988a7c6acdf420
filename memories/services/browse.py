"""Listing and searching an owner's memories for the bank page and the API.

Text search and the topic and entity filters go through the full-text index recall uses
(search.py: SQLite FTS5 with the porter stemmer, PostgreSQL's english tsvector), so
"tulips" finds "tulip" and a filter over 100,000 memories reads the index instead of
every row. A topic or entity filter is an exact match on one list item, checked on the
few rows the index returns; the JSON is read as JSON, so "Zürich" matches however the
database stored it (SQLite's JSON escapes it as "Z\\u00fcrich").
"""

from __future__ import annotations

import json
import operator
import re
from datetime import date, datetime, time, timedelta
from functools import reduce

from django.core.cache import cache
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.functions import Now
from django.db.models.expressions import RawSQL
from django.utils import timezone

from ..models import Memory
from ..search import FTS_TABLE, PG_COLUMN, TEXT_COLUMNS
from .entities import spellings

SORTS = {"new": ("-created_at", "-id"), "old": ("created_at", "id"), "importance": ("-importance", "-id"), "occurred": ("-occurred_at", "-id")}
# A search is a handful of words; more only make the index work harder for nothing.
MAX_SEARCH_WORDS = 16
# Facet lists (topics and entities with counts) show the most used values.
MAX_FACETS = 200
_WORD = re.compile(r"\w+", re.UNICODE)
# Facet counts read the JSON of this many newest memories (all of them for most spaces).
FACET_SAMPLE = 5000
FACET_CACHE_SECONDS = 60
# A filtered list's count stops here ("1,000+ memories match").
COUNT_CAP = 1000


def _words(text: str) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_SEARCH_WORDS]


def _fts5_phrase(words: list[str]) -> str:
    # Only \w characters are left, so nothing here can end the quoted string or be FTS syntax.
    return '"' + " ".join(words) + '"'


# A filter whose index lookup finds at most this many candidates is answered from that id
# list (exact count, no walk over the owner's rows); more, and the page walks the owner's
# rows in order, checking each (a common value fills a page within a few rows).
CANDIDATE_LIMIT = 2000


def _candidate_ids(columns: tuple[str, ...], words: list[str], *, phrase: bool, within: list[int] | None = None) -> list[int] | None:
    """Ids of memories (any owner, any state) whose columns hold the words (all of them,
    or as one phrase), from the index; None when there are more than CANDIDATE_LIMIT or
    no index to ask (another database). `within` (ids another filter found) narrows it."""
    # Ids are ints from the database, written into the SQL as such.
    narrow = f" AND {{id}} IN ({', '.join(str(int(pk)) for pk in within)})" if within else ""
    if within is not None and not within:
        return []
    if connection.vendor == "sqlite":
        terms = _fts5_phrase(words) if phrase else " AND ".join(_fts5_phrase([w]) for w in words)
        sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s{narrow.format(id='rowid')} LIMIT %s"
        params = [f"{{{' '.join(columns)}}} : ({terms})", CANDIDATE_LIMIT + 1]
    elif connection.vendor == "postgresql":
        # The tsvector holds every text column; plainto/phraseto parse the words safely.
        function = "phraseto_tsquery" if phrase else "plainto_tsquery"
        sql = f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ {function}('english', %s){narrow.format(id='id')} LIMIT %s"
        params = [" ".join(words), CANDIDATE_LIMIT + 1]
    else:
        return None
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    return ids if len(ids) <= CANDIDATE_LIMIT else None


def _matching_ids(columns: tuple[str, ...], words: list[str]) -> RawSQL | None:
    if connection.vendor == "sqlite":
        match = f"{{{' '.join(columns)}}} : ({' AND '.join(_fts5_phrase([w]) for w in words)})"
        return RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [match])
    if connection.vendor == "postgresql":
        return RawSQL(f"SELECT id FROM memories_memory WHERE {PG_COLUMN} @@ plainto_tsquery('english', %s)", [" ".join(words)])
    return None


def _has_item(column: str, value: str) -> RawSQL:
    """True when the JSON list in `column` holds `value` (case-insensitive; on SQLite for
    ASCII letters only)."""
    qualified = f'"memories_memory"."{column}"'
    if connection.vendor == "postgresql":
        sql = f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({qualified}) AS item WHERE lower(item) = lower(%s))"
    else:
        sql = f"EXISTS (SELECT 1 FROM json_each({qualified}) WHERE value = %s COLLATE NOCASE)"
    return RawSQL(sql, [value], output_field=BooleanField())


def _filter_item(memories: QuerySet[Memory], column: str, value: str, within: list[int] | None) -> tuple[QuerySet[Memory], list[int] | None]:
    # SQLite's index holds the list as stored: JSON text with non-ASCII letters escaped
    # ("Z\u00fcrich" is indexed as the words "z" and "u00fcrich"), so the phrase to look
    # for is the value written the same way.
    words = _words(json.dumps(value) if connection.vendor == "sqlite" else value)
    ids = _candidate_ids((column,), words, phrase=True, within=within) if words else None
    if ids is not None:
        memories = memories.filter(pk__in=ids)
    return memories.filter(_has_item(column, value)), ids if ids is not None else within


def _search(memories: QuerySet[Memory], q: str, within: list[int] | None) -> QuerySet[Memory]:
    words = _words(q)
    if not words:
        return memories
    if (ids := _candidate_ids(TEXT_COLUMNS, words, phrase=False, within=within)) is not None:
        return memories.filter(pk__in=ids)
    if (matching := _matching_ids(TEXT_COLUMNS, words)) is not None:
        return memories.filter(pk__in=matching)
    for word in words:
        memories = memories.filter(raw_text__icontains=word) | memories.filter(summary__icontains=word)
    return memories


# Which time a date range applies to: when it happened, or when it was stored.
DATE_FIELDS = {"occurred": "occurred_at", "stored": "created_at"}


def day_start(day: date) -> datetime:
    """Midnight at the start of a calendar day in the server's time zone."""
    return timezone.make_aware(datetime.combine(day, time.min))


# Whether a memory's fact still holds: current, superseded by a newer fact, or expired.
FACT_STATES = {
    "current": Q(outdated_by__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=Now())),
    "superseded": Q(outdated_by__isnull=False),
    "expired": Q(expires_at__lte=Now()),
}


def filter_memories(*, owner, q: str = "", topic: str = "", entity: str = "", status: str = "", sort: str = "new",
                    source: str = "", date_by: str = "occurred", date_from: date | None = None,
                    date_to: date | None = None, fact: str = "") -> QuerySet[Memory]:
    """The owner's live memories matching the filters, in the chosen order (no annotations:
    cheap enough to page through 100,000 rows). Text search matches every word, stemmed, in
    the text, summary, entities, topics or source. date_from and date_to are whole days,
    both included, of occurred_at or created_at (date_by)."""
    memories = Memory.objects.filter(owner=owner)
    within = None
    field = DATE_FIELDS.get(date_by, "occurred_at")
    if date_from:
        memories = memories.filter(**{f"{field}__gte": day_start(date_from)})
    if date_to:
        memories = memories.filter(**{f"{field}__lt": day_start(date_to + timedelta(days=1))})
    if source:
        memories = memories.filter(source=source)
    if topic:
        memories, within = _filter_item(memories, "topics", topic, within)
    if entity:
        names = spellings(owner=owner, entity=entity)
        if len(names) == 1:
            memories, within = _filter_item(memories, "entities", entity, within)
        else:
            # "Priya" finds "Priya Raman" (and the other way) when the space knows one of her.
            memories = memories.filter(reduce(operator.or_, (_has_item("entities", name) for name in names)))
    if q:
        # Not narrowed by `within`: FTS5 reads a common word's whole posting list either way.
        memories = _search(memories, q, None)
    if status:
        memories = memories.filter(status=status)
    if fact in FACT_STATES:
        memories = memories.filter(FACT_STATES[fact])
    order = SORTS.get(sort, SORTS["new"])
    if within is not None and connection.vendor == "sqlite":
        # A few hundred candidates: look them up by id and sort them, rather than walk the
        # owner's whole date index for the few that match (SQLite prefers the index for the
        # ORDER BY; a unary + on the column makes the sort not use it).
        order = [_unindexed(field) for field in order]
    return memories.order_by(*order)


def _unindexed(field: str):
    name = field.lstrip("-")
    column = RawSQL(f'+"memories_memory"."{Memory._meta.get_field(name).column}"', [])
    return column.desc() if field.startswith("-") else column.asc()


def get_memory(*, owner, memory_id: int) -> Memory | None:
    """One of the owner's live memories, or None (also when it is someone else's)."""
    return Memory.objects.filter(owner=owner, pk=memory_id).first()


def count_matches(memories: QuerySet[Memory], *, cap: int | None = None) -> tuple[int, bool]:
    """How many memories a filtered list holds, counted up to `cap` (True when there are
    more): counting every match of a common word costs a scan; "1,000+" does not."""
    cap = cap or COUNT_CAP
    n = memories.order_by()[: cap + 1].count()
    return min(n, cap), n > cap


def facets(*, owner, column: str, limit: int = MAX_FACETS) -> tuple[list[tuple[str, int]], bool]:
    """The most used topics (column="topics") or entities among the owner's newest
    FACET_SAMPLE live memories, with how many carry each, most used first, and whether
    older memories were left out of the counts. Cached for a minute per owner and size:
    reading every row's JSON at 100,000 memories takes seconds."""
    if column not in ("topics", "entities"):
        raise ValueError(column)
    live = Memory.objects.filter(owner=owner)
    total = live.count()
    key = f"memories:facets:{owner.pk}:{column}:{total}"
    if (cached := cache.get(key)) is not None:
        return cached, total > FACET_SAMPLE
    newest = live.order_by("-created_at", "-id").values("id")[:FACET_SAMPLE]
    sql, params = newest.query.sql_with_params()
    if connection.vendor == "postgresql":
        items = f"SELECT item FROM memories_memory m, jsonb_array_elements_text(m.{column}) AS item WHERE m.id IN ({sql})"
    else:
        items = f"SELECT j.value AS item FROM memories_memory m, json_each(m.{column}) AS j WHERE m.id IN ({sql})"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT item, COUNT(*) AS n FROM ({items}) AS items GROUP BY item ORDER BY n DESC, item LIMIT %s", [*params, limit])
        found = [(str(item), n) for item, n in cursor.fetchall()]
    cache.set(key, found, FACET_CACHE_SECONDS)
    return found, total > FACET_SAMPLE
