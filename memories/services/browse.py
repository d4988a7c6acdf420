"""Listing and searching an owner's memories for the bank page and the API.

Text search and the topic and entity filters go through the full-text index recall uses
(recall/lexical_index.py: SQLite FTS5 with the porter stemmer, PostgreSQL's english tsvector), so
"tulips" finds "tulip" and a filter over 100,000 memories reads the index instead of
every row. A topic or entity filter is an exact match on one list item, checked on the
few rows the index returns; the JSON is read as JSON, so "Zürich" matches however the
database stored it (SQLite's JSON escapes it as "Z\\u00fcrich").
"""

from __future__ import annotations

import json
import operator
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import reduce

from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import BooleanField, Count, Prefetch, Q, QuerySet
from django.db.models.functions import Now
from django.db.models.expressions import RawSQL
from django.utils import timezone

from ..models import Consolidation, Event, Memory, MemoryLink, ProcessedFile
from ..recall.bank_filters import candidate_ids, matching_ids
from ..recall.lexical_index import TEXT_COLUMNS
from . import fields
from .entities import spellings
from .history import memory_history
from .inbox import refused_files
from .owners import access_memory, may_fetch_original
from .status import RunState, consolidation_run
from .updates import recent_updates

SORTS = {
    "new": ("-created_at", "-id"),
    "old": ("created_at", "id"),
    "importance": ("-importance", "-id"),
    "occurred": ("-occurred_at", "-id"),
}
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


# A filter whose index lookup finds at most this many candidates is answered from that id
# list (exact count, no walk over the owner's rows); more, and the page walks the owner's
# rows in order, checking each (a common value fills a page within a few rows).
CANDIDATE_LIMIT = 2000


def _has_item(column: str, value: str) -> RawSQL:
    """True when the JSON list in `column` holds `value` (case-insensitive; on SQLite for
    ASCII letters only)."""
    qualified = f'"memories_memory"."{column}"'
    if connection.vendor == "postgresql":
        sql = f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({qualified}) AS item WHERE lower(item) = lower(%s))"
    else:
        sql = f"EXISTS (SELECT 1 FROM json_each({qualified}) WHERE value = %s COLLATE NOCASE)"
    return RawSQL(sql, [value], output_field=BooleanField())


def _filter_item(
    memories: QuerySet[Memory], column: str, value: str, within: list[int] | None
) -> tuple[QuerySet[Memory], list[int] | None]:
    # SQLite's index holds the list as stored: JSON text with non-ASCII letters escaped
    # ("Z\u00fcrich" is indexed as the words "z" and "u00fcrich"), so the phrase to look
    # for is the value written the same way.
    words = _words(json.dumps(value) if connection.vendor == "sqlite" else value)
    ids = candidate_ids((column,), words, phrase=True, limit=CANDIDATE_LIMIT, within=within) if words else None
    if ids is not None:
        memories = memories.filter(pk__in=ids)
    return memories.filter(_has_item(column, value)), ids if ids is not None else within


def _search(memories: QuerySet[Memory], q: str, within: list[int] | None) -> QuerySet[Memory]:
    words = _words(q)
    if not words:
        return memories
    if (ids := candidate_ids(TEXT_COLUMNS, words, phrase=False, limit=CANDIDATE_LIMIT, within=within)) is not None:
        return memories.filter(pk__in=ids)
    if (matching := matching_ids(TEXT_COLUMNS, words)) is not None:
        return memories.filter(pk__in=matching)
    for word in words:
        memories = memories.filter(raw_text__icontains=word) | memories.filter(summary__icontains=word)
    return memories


# Which time a date range applies to: when it happened, or when it was stored.
DATE_FIELDS = {"occurred": "occurred_at", "stored": "created_at"}


def day_start(day: date) -> datetime:
    """Midnight at the start of a calendar day in the server's time zone."""
    return timezone.make_aware(datetime.combine(day, time.min))


# Every date the app stores lies within these (services/fields.py). A filter's day outside
# them (date_to=9999-12-31) matches the same memories at the edge, where adding a day or
# a time zone's offset cannot overflow Python's datetime.
FIRST_DAY, LAST_DAY = date(fields.MIN_YEAR, 1, 1), date(fields.MAX_YEAR, 12, 31)


def clamp_day(day: date | None) -> date | None:
    return None if day is None else min(max(day, FIRST_DAY), LAST_DAY)


# Whether a memory's fact still holds: current, superseded by a newer fact, or expired.
FACT_STATES = {
    "current": Q(outdated_by__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=Now())),
    "superseded": Q(outdated_by__isnull=False),
    "expired": Q(expires_at__lte=Now()),
}


def filter_memories(
    *,
    owner,
    q: str = "",
    topic: str = "",
    entity: str = "",
    status: str = "",
    sort: str = "new",
    source: str = "",
    date_by: str = "occurred",
    date_from: date | None = None,
    date_to: date | None = None,
    fact: str = "",
) -> QuerySet[Memory]:
    """The owner's live memories matching the filters, in the chosen order (no annotations:
    cheap enough to page through 100,000 rows). Text search matches every word, stemmed, in
    the text, summary, entities, topics or source. date_from and date_to are whole days,
    both included, of occurred_at or created_at (date_by)."""
    memories = Memory.objects.owned_by(owner)
    within = None
    field = DATE_FIELDS.get(date_by, "occurred_at")
    date_from, date_to = clamp_day(date_from), clamp_day(date_to)
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
    live = Memory.objects.owned_by(owner)
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
        cursor.execute(
            f"SELECT item, COUNT(*) AS n FROM ({items}) AS items GROUP BY item ORDER BY n DESC, item LIMIT %s", [*params, limit]
        )
        found = [(str(item), n) for item, n in cursor.fetchall()]
    cache.set(key, found, FACET_CACHE_SECONDS)
    return found, total > FACET_SAMPLE


# --- pages: what each page of the app shows, read in one call ---------------------------------

PAGE_SIZE = 24
RECENT_ON_INGEST = 12
INSIGHTS_PER_PAGE = 20
# The bank's filters that narrow the list (sort and cursor only reorder or move through it).
BANK_FILTERS = ("q", "topic", "entity", "status", "source", "date_from", "date_to", "fact")
# Filters answered from the full-text index: their matches are counted up to COUNT_CAP.
INDEX_FILTERS = ("q", "topic", "entity")


@dataclass
class BankPage:
    memories: list[Memory]  # each with link_count
    total: int
    more: bool  # total stopped at COUNT_CAP
    has_next: bool
    has_prev: bool
    lost_cursor: bool  # the cursor named no live memory of the owner's (deleted since)


def bank_count(*, owner, **filters) -> tuple[int, bool]:
    """How many memories the bank shows for these filters, and whether counting stopped at
    COUNT_CAP: counting every match of a common word costs a scan; the whole bank (or one
    status) is counted from an index, exactly."""
    return _bank_count(filter_memories(owner=owner, **filters), filters)


def _bank_count(memories: QuerySet[Memory], filters: dict) -> tuple[int, bool]:
    if any(filters.get(k) for k in INDEX_FILTERS):
        return count_matches(memories)
    return memories.count(), False


def bank_page(*, owner, after: int | None = None, before: int | None = None, size: int = PAGE_SIZE, **filters) -> BankPage:
    """One page of the bank after (or before) the memory with that id, in the filters' order.

    Keyset paging: the cursor is the id of the last (or first) card shown, so page 4,000
    costs what page 1 costs, which OFFSET cannot promise. `filters` are filter_memories'."""
    # Built once: the topic, entity and text filters ask the full-text index as they are built.
    memories = filter_memories(owner=owner, **filters)
    total, more = _bank_count(memories, filters)
    order = SORTS.get(filters.get("sort") or "new", SORTS["new"])
    anchor_id = after or before
    anchor = Memory.objects.owned_by(owner).filter(pk=anchor_id).first() if anchor_id else None
    if anchor is not None and before:
        backwards = [o[1:] if o.startswith("-") else f"-{o}" for o in order]
        rows = list(_keyset(memories, order, anchor, forward=False).order_by(*backwards)[: size + 1])
        has_prev, has_next = len(rows) > size, True
        rows = rows[:size][::-1]
    else:
        page = _keyset(memories, order, anchor, forward=True) if anchor is not None else memories
        rows = list(page[: size + 1])
        has_next, has_prev = len(rows) > size, anchor is not None
        rows = rows[:size]
    return BankPage(
        memories=_with_link_counts(rows, owner=owner),
        total=total,
        more=more,
        has_next=has_next,
        has_prev=has_prev,
        lost_cursor=bool(anchor_id and anchor is None),
    )


def _keyset(memories: QuerySet[Memory], order: tuple[str, ...], anchor: Memory, *, forward: bool) -> QuerySet[Memory]:
    """Rows after (or before) the anchor in this order; the order ends on a unique id."""
    conditions = Q()
    equal = Q()
    for field in order:
        name = field.lstrip("-")
        descending = field.startswith("-") == forward
        value = getattr(anchor, name)
        conditions |= equal & Q(**{f"{name}__{'lt' if descending else 'gt'}": value})
        equal &= Q(**{name: value})
    return memories.filter(conditions)


def _with_link_counts(memories: list[Memory], *, owner) -> list[Memory]:
    # Counted for the shown page only: an aggregate over the filtered list would GROUP BY every row.
    # Only links whose other end is the owner's count (memory_links' rule).
    ids = [m.pk for m in memories]
    counts = dict.fromkeys(ids, 0)
    for column, other in (("from_memory", "to_memory"), ("to_memory", "from_memory")):
        links = MemoryLink.objects.filter(**{f"{column}__in": ids, f"{other}__owner": owner})
        for row in links.values(column).annotate(n=Count("id")):
            counts[row[column]] += row["n"]
    for m in memories:
        m.link_count = counts[m.pk]
    return memories


def any_state(*, owner, memory_id: int) -> Memory:
    """One of the owner's memories in any state, deleted and superseded included (its page
    still shows what happened to it and offers the way back), with what it points to;
    Memory.DoesNotExist for anyone else's (access_memory)."""
    related = Memory.all_objects.select_related("duplicate_of", "superseded_by", "outdated_by")
    return access_memory(owner, memory_id, memories=related)


@dataclass
class MemoryPage:
    memory: Memory
    connections: list[tuple[str, Memory, str]]  # (relationship, the other memory, "to" or "from")
    consolidations: QuerySet[Consolidation]
    inbox_files: QuerySet[ProcessedFile]
    events: QuerySet[Event]
    older_versions: QuerySet[Memory]
    near_duplicates: QuerySet[Memory]
    outdates: QuerySet[Memory]

    def context(self) -> dict:
        return dict(vars(self))


def memory_page(*, owner, memory_id: int) -> MemoryPage:
    """What a memory's page shows, in any state of the memory; Memory.DoesNotExist when it
    is not the owner's."""
    memory = any_state(owner=owner, memory_id=memory_id)
    # memory_links: only links whose other end is the owner's too, newest first, out then in.
    links = list(memory_links(owner=owner, memory=memory).select_related("from_memory", "to_memory").order_by("-created_at"))
    return MemoryPage(
        memory=memory,
        connections=[(link.relationship, link.to_memory, "to") for link in links if link.from_memory_id == memory.pk]
        + [(link.relationship, link.from_memory, "from") for link in links if link.from_memory_id != memory.pk],
        consolidations=memory.consolidations.owned_by(owner).order_by("-created_at"),
        inbox_files=ProcessedFile.objects.owned_by(owner).filter(memory=memory),
        events=memory_history(owner=owner, memory_id=memory.pk),
        # The live managers hide these (they are out of the record), but the page should say they exist.
        older_versions=Memory.all_objects.owned_by(owner).filter(superseded_by=memory).order_by("-created_at"),
        near_duplicates=Memory.objects.owned_by(owner).filter(duplicate_of=memory).order_by("pk"),
        # Facts change: the older facts this memory superseded.
        outdates=Memory.objects.owned_by(owner).filter(outdated_by=memory).order_by("-occurred_at"),
    )


def memory_links(*, owner, memory: Memory) -> QuerySet[MemoryLink]:
    """A memory's links in both directions whose other end is the owner's too, oldest first."""
    return MemoryLink.objects.filter(
        Q(from_memory=memory, to_memory__owner=owner) | Q(to_memory=memory, from_memory__owner=owner)
    ).order_by("pk")


# The admin refuses a link or an insight source across spaces, but a row written some other
# way (an old database, hand-written SQL) would still show another owner's memory: every read
# of links and sources goes through these, which keep only the owner's ends.


def link_prefetches(*, owner) -> list[Prefetch]:
    """Prefetches of `links_out` and `links_in` (oldest first) with the other end the owner's,
    the same rule as memory_links, for a page of memories at once."""
    return [
        Prefetch("links_out", queryset=MemoryLink.objects.filter(to_memory__owner=owner).order_by("pk")),
        Prefetch("links_in", queryset=MemoryLink.objects.filter(from_memory__owner=owner).order_by("pk")),
    ]


def source_prefetch(*, owner, deleted_too: bool = False) -> Prefetch:
    """A prefetch of consolidations' `sources` that holds only the owner's memories, by id;
    `deleted_too`: deleted and superseded ones as well (a stale insight shows which left)."""
    memories = Memory.all_objects if deleted_too else Memory.objects
    return Prefetch("sources", queryset=memories.owned_by(owner).order_by("pk"))


def owned_source_ids(consolidation: Consolidation) -> list[int]:
    """The ids of a consolidation's live sources that are its owner's, in order."""
    return list(consolidation.sources.owned_by(consolidation.owner_id).order_by("pk").values_list("pk", flat=True))


def memory_consolidations(*, owner, memory: Memory) -> QuerySet[Consolidation]:
    """The owner's insights that have this memory among their sources, newest first."""
    return (
        Consolidation.objects.owned_by(owner)
        .filter(sources=memory)
        .prefetch_related(source_prefetch(owner=owner))
        .order_by("-created_at", "-id")
    )


@dataclass
class HistoryPage:
    memory: Memory | None  # None once purged: the events remain
    events: QuerySet[Event]


def history_page(*, owner, memory_id: int) -> HistoryPage | None:
    """Who changed one of the owner's memories, newest first, also after a purge; None when
    the owner never had a memory with that id."""
    events = memory_history(owner=owner, memory_id=memory_id)
    try:
        memory = any_state(owner=owner, memory_id=memory_id)
    except Memory.DoesNotExist:
        if not events.exists():
            return None
        memory = None  # purged: its history stays
    return HistoryPage(memory=memory, events=events)


def original_file(*, user, memory_id: int) -> Memory | None:
    """The memory whose original upload `user` may fetch (may_fetch_original says who), or None."""
    memory = Memory.all_objects.filter(pk=memory_id).first()
    return memory if memory is not None and may_fetch_original(user=user, memory=memory) else None


def purge_record(*, owner, memory_id: int) -> Event | None:
    """The event that purged one of the owner's memories, if that is why it is gone."""
    return Event.objects.filter(
        owner=owner, subject_type=Event.Subject.MEMORY, subject_id=memory_id, action=Event.Action.PURGED
    ).first()


def current_memories(*, owner, memory_ids: list[int]) -> list[Memory]:
    """The owner's live memories with these ids as they are now (a task may have run since
    they were read), in the order given."""
    found = Memory.objects.owned_by(owner).filter(pk__in=memory_ids).in_bulk()
    return [found[pk] for pk in memory_ids if pk in found]


def restorable(*, owner, memory_ids) -> list[int]:
    """Of the memories a refused ingest named, those still there to restore (not purged)."""
    ids = [pk for pk in memory_ids if pk]
    if not ids:
        return []
    return list(
        Memory.all_objects.owned_by(owner)
        .filter(pk__in=ids, deleted_at__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def ingest_page(*, owner) -> dict:
    """The newest memories (their status as it changes) and recent inbox refusals."""
    return {
        "recent": Memory.objects.owned_by(owner).order_by("-created_at", "-id")[:RECENT_ON_INGEST],
        "refused": refused_files(owner=owner),
    }


def review_page(*, owner, page: str | None) -> Page:
    """Memories waiting for review, oldest first: the order they came in."""
    waiting = Memory.objects.owned_by(owner).filter(status=Memory.Status.REVIEW).order_by("created_at", "id")
    return Paginator(waiting, PAGE_SIZE).get_page(page)


@dataclass
class InsightsPage:
    page: Page  # of Consolidation, each with its sources (deleted ones too)
    updates: list
    run: RunState


def insights_page(*, owner, page: str | None, requested_at: datetime | None) -> InsightsPage:
    """The consolidations page: the owner's insights, the facts that changed, and the run."""
    insights = (
        # Deleted sources too, so a stale insight can show which source left.
        Consolidation.objects.owned_by(owner)
        .prefetch_related(source_prefetch(owner=owner, deleted_too=True))
        .order_by("-created_at", "-id")
    )
    return InsightsPage(
        page=Paginator(insights, INSIGHTS_PER_PAGE).get_page(page),
        updates=recent_updates(owner=owner),
        run=consolidation_run(owner=owner, requested_at=requested_at),
    )
